// API limits that hold: a page size costs the same whether written in the query or passed as a
// variable, nested lists are capped per job, and fairShare is computed once however often asked.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FairShareCache } from "../../src/api/fair-share-cache.js";
import { gql, gqlOk, startTestApi, type TestApi } from "../helpers/api.js";

let t: TestApi;
let jobId: string;
let viewer: string;

beforeAll(async () => {
  t = await startTestApi();
  await gqlOk(t.url, t.adminToken, `mutation { createQueue(input: { name: "team" }) { name } }`);
  for (const c of ["c1", "c2"])
    await gqlOk(t.url, t.adminToken, `mutation { registerCluster(input: { name: "${c}" }) { name } }`);
  const d = await gqlOk<{ submitJob: { id: string } }>(
    t.url,
    t.adminToken,
    "mutation($i: SubmitJobInput!) { submitJob(input: $i) { id } }",
    { i: { name: "wide", queue: "team", tasks: [{ name: "w", replicas: 150, resources: { cpu: 100 } }] } },
  );
  jobId = d.submitJob.id;
  viewer = (
    await gqlOk<{ createToken: { secret: string } }>(
      t.url,
      t.adminToken,
      `mutation { createToken(input: { name: "v", role: VIEWER }) { secret } }`,
    )
  ).createToken.secret;
});
afterAll(async () => t?.close());

const HEAVY = (first: string) =>
  `{ edges { node { id pods { name } events { id } bindRequests { id } } } }`.replace(
    /^/,
    `jobs(first: ${first}) `,
  );

describe("query cost", () => {
  it("a page size passed as a variable costs what it costs written in the query", async () => {
    const literal = await gql(t.url, viewer, `{ ${HEAVY("500")} }`);
    expect(literal.errors?.[0]?.message).toMatch(/cost limit/i);
    const variable = await gql(t.url, viewer, `query($n: Int) { ${HEAVY("$n")} }`, { n: 500 });
    expect(variable.status).toBe(400);
    expect(variable.errors?.[0]?.message).toMatch(/cost limit/i);
    const defaulted = await gql(t.url, viewer, `query($n: Int = 500) { ${HEAVY("$n")} }`);
    expect(defaulted.errors?.[0]?.message).toMatch(/cost limit/i);
  });

  it("small pages pass", async () => {
    const ok = await gql(t.url, viewer, `query($n: Int) { ${HEAVY("$n")} }`, { n: 20 });
    expect(ok.errors).toBeUndefined();
  });
});

describe("nested lists are capped", () => {
  it("a job's pods come a page at a time (100 by default, at most 1,000), the next after the last", async () => {
    const q = (args: string) =>
      gql<{ job: { pods: unknown[] } }>(t.url, viewer, `{ job(id: "${jobId}") { pods${args} { name } } }`);
    expect((await q("")).data?.job.pods).toHaveLength(100);
    const all = (await q("(first: 150)")).data?.job.pods as { name: string }[];
    expect(all).toHaveLength(150);
    expect(all.slice(0, 3).map((p) => p.name)).toEqual(["w-0", "w-1", "w-2"]);
    expect((await q("(first: 1001)")).errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      field: "first",
    });
    // The next page starts after the previous page's last pod.
    const next = (await q(`(first: 100, after: "w-99")`)).data?.job.pods as { name: string }[];
    expect(next.map((p) => p.name)).toEqual(Array.from({ length: 50 }, (_, i) => `w-${100 + i}`));
    expect((await q(`(after: "w-149")`)).data?.job.pods).toEqual([]);
    expect((await q(`(after: "no-such-pod")`)).data?.job.pods).toEqual([]);
  });
});

describe("fairShare", () => {
  it("fifteen aliased fairShare fields are one computation", async () => {
    const cache = new FairShareCache(t.server.store);
    const asked = Array.from({ length: 15 }, () => cache.rows(null));
    expect(new Set(asked).size).toBe(1);
    await Promise.all(asked);
    expect(cache.rows(null)).toBe(asked[0]); // kept briefly
    expect(cache.rows("c1")).not.toBe(asked[0]);
  });

  it("a VIEWER may ask fifteen aliased fairShare fields and gets one answer", async () => {
    const aliased = `{ ${Array.from({ length: 15 }, (_, i) => `f${i}: fairShare { queue cluster }`).join(" ")} }`;
    const d = await gqlOk<Record<string, unknown>>(t.url, viewer, aliased);
    expect(new Set(Object.values(d).map((v) => JSON.stringify(v))).size).toBe(1);
  });
});
