// Where a webhook may send: http(s) only, and — unless private targets are allowed — no address
// inside the network the workers run in. Every address a name resolves to is checked, and the
// request goes to the checked address (never resolved again: a name that changes its answer
// between check and connect cannot redirect it).
import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";

const RANGES: [string, string, number, "ipv4" | "ipv6"][] = [
  ["unspecified", "0.0.0.0", 8, "ipv4"],
  ["private", "10.0.0.0", 8, "ipv4"],
  ["shared (carrier-grade NAT)", "100.64.0.0", 10, "ipv4"],
  ["loopback", "127.0.0.0", 8, "ipv4"],
  ["link-local", "169.254.0.0", 16, "ipv4"],
  ["private", "172.16.0.0", 12, "ipv4"],
  ["reserved", "192.0.0.0", 24, "ipv4"],
  ["private", "192.168.0.0", 16, "ipv4"],
  ["benchmarking", "198.18.0.0", 15, "ipv4"],
  ["multicast", "224.0.0.0", 4, "ipv4"],
  ["reserved", "240.0.0.0", 4, "ipv4"],
  ["unspecified", "::", 128, "ipv6"],
  ["loopback", "::1", 128, "ipv6"],
  ["unique-local", "fc00::", 7, "ipv6"],
  ["link-local", "fe80::", 10, "ipv6"],
  ["multicast", "ff00::", 8, "ipv6"],
];

const LISTS = RANGES.map(([name, net, prefix, type]) => {
  const list = new BlockList();
  list.addSubnet(net, prefix, type);
  return { name, list, type };
});

/** An IPv6 address that carries an IPv4 one (::ffff:a.b.c.d, ::a.b.c.d, NAT64) as that address. */
function embeddedV4(address: string): string | null {
  const m = /^(?:::ffff:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (m) return m[1]!;
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return null;
  const [hi, lo] = [parseInt(hex[1]!, 16), parseInt(hex[2]!, 16)];
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** The kind of non-public address this is ("loopback", "private", …), or null for a public one. */
export function restrictedAddressKind(address: string): string | null {
  const v4 = isIP(address) === 6 ? embeddedV4(address) : null;
  const [a, type] = v4
    ? [v4, "ipv4" as const]
    : [address, isIP(address) === 4 ? ("ipv4" as const) : ("ipv6" as const)];
  return LISTS.find((l) => l.type === type && l.list.check(a, type))?.name ?? null;
}

export class TargetRefused extends Error {
  override name = "TargetRefused";
}

export interface ResolvedTarget {
  url: URL;
  address: string;
  family: 4 | 6;
}

/** The URL's scheme, then each address its host resolves to; the first address to connect to.
 * A refusal is a TargetRefused; a name that does not resolve (perhaps for now) a plain Error. */
export async function resolveTarget(raw: string, allowPrivate: boolean): Promise<ResolvedTarget> {
  const url = new URL(raw);
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new TargetRefused(`the scheme must be http or https, not ${url.protocol.replace(/:$/, "")}`);
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const addresses = isIP(host)
    ? [{ address: host, family: isIP(host) }]
    : await lookup(host, { all: true, verbatim: true }).catch((err: Error) => {
        throw new Error(`${host} does not resolve: ${err.message}`);
      });
  if (!addresses.length) throw new Error(`${host} does not resolve`);
  if (!allowPrivate)
    for (const a of addresses) {
      const kind = restrictedAddressKind(a.address);
      if (kind)
        throw new TargetRefused(
          `${host} resolves to ${a.address}, a ${kind} address (private targets are not allowed for this webhook)`,
        );
    }
  const first = addresses[0]!;
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}
