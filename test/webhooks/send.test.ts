// Sending one webhook request to a real HTTP endpoint: the signature a receiver checks (and its
// refusal of replays and tampering), redirects not followed, and targets refused before any
// request when they resolve to addresses inside the network.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sendWebhook } from "../../src/webhooks/send.js";
import { signWebhook, webhookSignatureProblem } from "../../src/webhooks/signature.js";
import { resolveTarget, restrictedAddressKind, TargetRefused } from "../../src/webhooks/target.js";
import { WebhookReceiver } from "../helpers/webhook-receiver.js";

let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await WebhookReceiver.start();
});
afterAll(() => receiver?.close());

const send = (o: Partial<Parameters<typeof sendWebhook>[0]> = {}) =>
  sendWebhook({
    url: receiver.url,
    secret: "whsec_test",
    allowPrivateTargets: true,
    body: '{"text":"hello"}',
    event: "job.succeeded",
    delivery: "d-1",
    timeoutMs: 5000,
    ...o,
  });

describe("sendWebhook", () => {
  it("posts the body signed over timestamp.body; the receiver's check accepts it and refuses replays and tampering", async () => {
    receiver.answer({ status: 204 });
    const before = receiver.requests.length;
    expect(await send()).toEqual({ ok: true, responseCode: 204, error: null, refused: false });
    const r = receiver.requests[before]!;
    expect(r.method).toBe("POST");
    expect(r.headers["content-type"]).toBe("application/json");
    expect(r.headers["x-fleetq-event"]).toBe("job.succeeded");
    expect(r.headers["x-fleetq-delivery"]).toBe("d-1");
    const timestamp = r.headers["x-fleetq-timestamp"] as string;
    const signature = r.headers["x-fleetq-signature"] as string;
    expect(signature).toBe(signWebhook("whsec_test", Number(timestamp), r.body));
    expect(signature).toMatch(/^v1=[0-9a-f]{64}$/);
    const check = { secret: "whsec_test", body: r.body, timestamp, signature };
    expect(webhookSignatureProblem(check)).toBeNull();
    expect(webhookSignatureProblem({ ...check, body: '{"text":"hellO"}' })).toBe("signature does not match");
    expect(webhookSignatureProblem({ ...check, secret: "other" })).toBe("signature does not match");
    expect(webhookSignatureProblem({ ...check, now: Number(timestamp) + 301 })).toMatch(/too old/);
    expect(webhookSignatureProblem({ ...check, now: Number(timestamp) + 299 })).toBeNull();
    expect(webhookSignatureProblem({ ...check, timestamp: undefined })).toMatch(/timestamp/);
  });

  it("does not follow a redirect: a 3xx is a failure naming where it pointed", async () => {
    const target = await WebhookReceiver.start();
    try {
      receiver.answer({ status: 302, headers: { location: target.url } });
      const out = await send();
      expect(out).toEqual({
        ok: false,
        responseCode: 302,
        error: `HTTP 302: redirect to ${target.url} not followed`,
        refused: false,
      });
      expect(target.requests).toEqual([]);
    } finally {
      target.close();
      receiver.answer({ status: 200 });
    }
  });

  it("a 500 is a failure that may be tried again", async () => {
    receiver.answer({ status: 500 });
    expect(await send()).toEqual({ ok: false, responseCode: 500, error: "HTTP 500", refused: false });
    receiver.answer({ status: 200 });
  });

  it("refuses a loopback target unless private targets are allowed, without sending anything", async () => {
    const before = receiver.requests.length;
    const out = await send({ allowPrivateTargets: false });
    expect(out.ok).toBe(false);
    expect(out.refused).toBe(true);
    expect(out.error).toMatch(/^refused: 127\.0\.0\.1 resolves to 127\.0\.0\.1, a loopback address/);
    // every address a name resolves to is checked (localhost: 127.0.0.1 and perhaps ::1)
    const byName = await send({
      allowPrivateTargets: false,
      url: receiver.url.replace("127.0.0.1", "localhost"),
    });
    expect(byName.refused).toBe(true);
    expect(byName.error).toMatch(/localhost resolves to .*, a loopback address/);
    expect(receiver.requests.length).toBe(before);
  });

  it("refuses schemes other than http and https", async () => {
    for (const url of ["ftp://example.com/x", "file:///etc/passwd", "gopher://example.com/"]) {
      const out = await send({ url });
      expect(out.refused).toBe(true);
      expect(out.error).toMatch(/scheme must be http or https/);
    }
  });
});

describe("restricted addresses", () => {
  it("names the kind of every non-public range, and none for public addresses", () => {
    const cases: [string, string | null][] = [
      ["127.0.0.1", "loopback"],
      ["10.1.2.3", "private"],
      ["172.16.0.1", "private"],
      ["172.32.0.1", null],
      ["192.168.1.1", "private"],
      ["169.254.169.254", "link-local"],
      ["100.64.0.1", "shared (carrier-grade NAT)"],
      ["0.0.0.0", "unspecified"],
      ["224.0.0.1", "multicast"],
      ["255.255.255.255", "reserved"],
      ["::1", "loopback"],
      ["::", "unspecified"],
      ["fe80::1", "link-local"],
      ["fd12:3456::1", "unique-local"],
      ["ff02::1", "multicast"],
      ["::ffff:127.0.0.1", "loopback"],
      ["::ffff:7f00:1", "loopback"],
      ["::ffff:10.0.0.1", "private"],
      ["8.8.8.8", null],
      ["93.184.216.34", null],
      ["2606:4700::1111", null],
    ];
    for (const [address, kind] of cases)
      expect([address, restrictedAddressKind(address)]).toEqual([address, kind]);
  });

  it("resolveTarget gives the checked address to connect to, and refuses bracketed IPv6 loopback", async () => {
    expect(await resolveTarget("http://8.8.8.8/x", false)).toMatchObject({ address: "8.8.8.8", family: 4 });
    await expect(resolveTarget("http://[::1]:8080/x", false)).rejects.toBeInstanceOf(TargetRefused);
    await expect(resolveTarget("http://[::ffff:127.0.0.1]/", false)).rejects.toThrow(/loopback/);
    expect(await resolveTarget("http://[::1]:8080/x", true)).toMatchObject({ address: "::1", family: 6 });
  });
});
