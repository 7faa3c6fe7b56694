// Kubernetes resource quantities ("500m", "1.5", "16Gi", "1e3", "128974848Ki") as numbers.
// Our own parser because client-node's quantityToScalar rejects decimals with binary suffixes.

const SUFFIX_FACTORS: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/;

/** The quantity's value in base units; throws on a malformed quantity. */
export function parseQuantity(quantity: string | number): number {
  if (typeof quantity === "number") return quantity;
  const match = QUANTITY.exec(quantity.trim());
  if (!match) throw new Error(`not a Kubernetes quantity: "${quantity}"`);
  const factor = SUFFIX_FACTORS[match[2] ?? ""] ?? 1;
  return Number(match[1]) * factor;
}

/** CPU quantity ("2", "500m") in millicores. */
export function cpuMillis(quantity: string | number): number {
  return Math.round(parseQuantity(quantity) * 1000);
}

/** Memory quantity ("16Gi") in bytes. */
export function bytes(quantity: string | number): number {
  return Math.round(parseQuantity(quantity));
}
