// /metrics reads the database on every scrape: only token holders may ask.
import { afterAll, beforeAll, expect, it } from "vitest";
import { gqlOk, startTestApi, type TestApi } from "../helpers/api.js";

let t: TestApi;
let base: string;

beforeAll(async () => {
  t = await startTestApi();
  base = t.url.replace(/\/graphql$/, "");
});
afterAll(async () => t?.close());

it("/metrics needs a token; a VIEWER's is enough", async () => {
  const anonymous = await fetch(`${base}/metrics`);
  expect(anonymous.status).toBe(401);
  expect(await anonymous.text()).not.toContain("fleetq_");
  expect((await fetch(`${base}/metrics`, { headers: { authorization: "Bearer fq_nonsense" } })).status).toBe(
    401,
  );
  const viewer = (
    await gqlOk<{ createToken: { secret: string } }>(
      t.url,
      t.adminToken,
      `mutation { createToken(input: { name: "prometheus", role: VIEWER }) { secret } }`,
    )
  ).createToken.secret;
  const scrapes = await Promise.all(
    Array.from({ length: 5 }, () =>
      fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${viewer}` } }),
    ),
  );
  for (const r of scrapes) {
    expect(r.status).toBe(200);
    expect(await r.text()).toContain("fleetq_outbox_backlog");
  }
});
