// API limits that hold: a page size costs the same whether written in the query or passed as a
// variable, rows are weighed by what they cost (a pod or node row 10), lists of the fleet's
// length count its real size, nested lists are capped per job (a cluster's nodes paged too), and
// fairShare is computed once however often asked.
import { parse } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FairShareCache } from "../../src/api/fair-share-cache.js";
import { FleetSizeCache } from "../../src/api/fleet-size.js";
import { MAX_QUERY_COST, operationCost, ROW_WEIGHTS } from "../../src/api/query-cost.js";
import { buildSchema } from "../../src/api/schema.js";
import {
  gql,
  gqlOk,
  registerClusterWithAgent,
  reportNodes,
  startTestApi,
  type TestApi,
} from "../helpers/api.js";
import { admin as pgAdmin, countRows } from "../helpers/db.js";

let t: TestApi;
let jobId: string;
let viewer: string;

beforeAll(async () => {
  // The cost limit, not the per-token budget (rate-limits.test.ts), is what is tested here.
  const off = { burst: 0, perSecond: 0, concurrent: 0 };
  t = await startTestApi({ rateLimits: { user: off, admin: off, agent: off } });
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

const schema = buildSchema();

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
    const ok = await gql(t.url, viewer, `query($n: Int) { ${HEAVY("$n")} }`, { n: 6 });
    expect(ok.errors).toBeUndefined();
  });

  it("bounds the pods one query may read: a page of 1,000 pods of one job, not of two", async () => {
    const pods = (n: number) => `{ jobs(first: ${n}) { edges { node { id pods(first: 1000) { name } } } } }`;
    const weight = ROW_WEIGHTS.Pod ?? 1;
    expect(weight).toBeGreaterThanOrEqual(10);
    expect((await gql(t.url, viewer, pods(1))).errors).toBeUndefined();
    for (const n of [2, 19]) {
      expect(n * 1000 * weight).toBeGreaterThanOrEqual(MAX_QUERY_COST);
      const refused = await gql(t.url, viewer, pods(n));
      expect(refused.status).toBe(400);
      expect(refused.errors?.[0]?.message).toMatch(
        /cost limit of 20000 exceeded, found \d+ .*a Pod row 10.*ask for smaller pages/,
      );
    }
  });

  it("a job's pods counted by state cost a few points, and count every pod", async () => {
    const q = `{ jobs(first: 100) { edges { node { id podStates { state count } } } } }`;
    expect(operationCost(schema, parse(q), null, {})).toBeLessThan(5_000);
    const d = await gqlOk<{ job: { podStates: { state: string; count: number }[] } }>(
      t.url,
      viewer,
      `{ job(id: "${jobId}") { podStates { state count } } }`,
    );
    expect(d.job.podStates).toEqual([{ state: "PENDING", count: 150 }]);
  });
});

describe("submitJobs", () => {
  it("counts what it returns once per input: a matrix may not read back every job's pods", async () => {
    const inputs = Array.from({ length: 300 }, (_, i) => ({
      name: `m-${i}`,
      queue: "team",
      tasks: [{ name: "w", replicas: 100, resources: { cpu: 10 } }],
    }));
    const before = await gqlOk<{ jobs: { edges: unknown[] } }>(
      t.url,
      t.adminToken,
      "{ jobs(first: 500) { edges { node { id } } } }",
    );
    const heavy = await gql(
      t.url,
      t.adminToken,
      "mutation($i: [SubmitJobInput!]!) { submitJobs(inputs: $i) { id pods(first: 100) { name } } }",
      { i: inputs },
    );
    expect(heavy.status).toBe(400);
    // 300 × 1,001 for the jobs and their pods, and a point per KiB of the inputs sent
    expect(heavy.errors?.[0]?.message).toMatch(/cost limit of 20000 exceeded, found 3003\d\d\b/);
    const after = await gqlOk<{ jobs: { edges: unknown[] } }>(
      t.url,
      t.adminToken,
      "{ jobs(first: 500) { edges { node { id } } } }",
    );
    expect(after.jobs.edges.length, "refused before anything was submitted").toBe(before.jobs.edges.length);
    // The same matrix asking for what identifies each job goes through.
    const slim = await gqlOk<{ submitJobs: { id: string }[] }>(
      t.url,
      t.adminToken,
      "mutation($i: [SubmitJobInput!]!) { submitJobs(inputs: $i) { id state } }",
      { i: inputs },
    );
    expect(slim.submitJobs).toHaveLength(300);
  });
});

describe("a cluster's nodes", () => {
  it("cost what the largest cluster has, and come a page at a time", async () => {
    const agent = await registerClusterWithAgent(t, "big");
    const nodes = Array.from({ length: 2100 }, (_, i) => ({
      name: `n${String(i).padStart(4, "0")}`,
      capacity: { cpu: 1000 },
    }));
    await reportNodes(t, agent, "big", nodes);
    const fleet = new FleetSizeCache(t.server.store);
    await fleet.refresh();
    expect(fleet.current()).toEqual({ clusters: 3, largestCluster: 2100 });
    const cost = (q: string) => operationCost(schema, parse(q), null, {}, fleet.current());
    // every cluster by the largest one's count: 3 × (1 + 2,100 × 10)
    expect(cost("{ clusters { name nodes { name } } }")).toBe(3 * (1 + 2100 * (ROW_WEIGHTS.Node ?? 1)));
    expect(cost(`{ cluster(name: "big") { nodes { name } } }`)).toBeGreaterThan(MAX_QUERY_COST);
    expect(cost(`{ cluster(name: "big") { nodes(first: 1000) { name } } }`)).toBeLessThan(MAX_QUERY_COST);
    expect(cost("{ clusters { name nodeCount } }")).toBe(3);
    // counted and summed by the database: one row per cluster, whatever its size
    expect(cost("{ clusters { nodeCount capacity { cpu } free { cpu } } }")).toBe(3 * 3);
    const totals = await gqlOk<{
      clusters: { name: string; nodeCount: number; capacity: { cpu: number } }[];
    }>(t.url, viewer, "{ clusters { name nodeCount capacity { cpu gpu } free { cpu } } }");
    expect(totals.clusters.find((c) => c.name === "big")).toEqual({
      name: "big",
      nodeCount: 2100,
      capacity: { cpu: 2_100_000, gpu: 0 },
      free: { cpu: 2_100_000 },
    });

    const page = (args: string) =>
      gqlOk<{ cluster: { nodeCount: number; nodes: { name: string }[] } }>(
        t.url,
        viewer,
        `{ cluster(name: "big") { nodeCount nodes${args} { name } } }`,
      );
    const read: { name: string }[] = [];
    for (let after = ""; ; ) {
      const p = await page(`(first: 1000${after ? `, after: "${after}"` : ""})`);
      expect(p.cluster.nodeCount).toBe(2100);
      read.push(...p.cluster.nodes);
      if (p.cluster.nodes.length < 1000) break;
      after = p.cluster.nodes.at(-1)!.name;
    }
    expect(read.map((n) => n.name)).toEqual(nodes.map((n) => n.name));
    expect((await page(`(first: 10, after: "no-such-node")`)).cluster.nodes).toEqual([]);
    const tooMany = await gql(t.url, viewer, `{ cluster(name: "big") { nodes(first: 1001) { name } } }`);
    expect(tooMany.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "first" });
  });

  it("a page reads only its rows from the database, not the whole cluster", async () => {
    // What PostgreSQL counts as read from the node table (flushed by each connection within
    // about 10 s of its last query).
    const nodeRowsRead = () =>
      pgAdmin(async (c) => {
        const r = await c.query(
          "SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) AS n FROM pg_stat_user_tables WHERE relname = 'node'",
        );
        return Number(r.rows[0].n);
      }, t.db.url);
    // What earlier tests read is counted first.
    await new Promise((r) => setTimeout(r, 11_500));
    const before = await nodeRowsRead();
    for (let i = 0; i < 30; i++) {
      const p = await gqlOk<{ cluster: { nodes: { name: string }[] } }>(
        t.url,
        viewer,
        `{ cluster(name: "big") { nodes(first: 1, after: "n${String(i).padStart(4, "0")}") { name } } }`,
      );
      expect(p.cluster.nodes.map((n) => n.name)).toEqual([`n${String(i + 1).padStart(4, "0")}`]);
    }
    await new Promise((r) => setTimeout(r, 11_500));
    // 30 pages of the 2,100 nodes read whole would be 63,000 rows; the fleet's size is read too
    // meanwhile (a few thousand).
    expect((await nodeRowsRead()) - before).toBeLessThan(15_000);
  }, 40_000);
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

describe("templates and manifests weigh by their size", () => {
  const SUBMIT = "mutation($input: SubmitJobInput!) { submitJob(input: $input) { id } }";
  const template = (kib: number) => ({
    spec: { containers: [{ name: "m", image: "x", env: [{ name: "BLOB", value: "x".repeat(kib * 1024) }] }] },
  });
  const input = (kib: number, name = "big") => ({
    name,
    queue: "team",
    tasks: [{ name: "w", replicas: 1, resources: { cpu: 100 }, template: template(kib) }],
  });
  const cost = (q: string, v: Record<string, unknown> = {}) => operationCost(schema, parse(q), null, v);

  it("a submit costs a point per KiB of what it sends, as a variable or written in the query", () => {
    expect(cost(SUBMIT, { input: input(0) })).toBeLessThan(5);
    expect(cost(SUBMIT, { input: input(200) })).toBeGreaterThanOrEqual(200);
    const many = "mutation($i: [SubmitJobInput!]!) { submitJobs(inputs: $i) { id } }";
    expect(cost(many, { i: [input(100), input(100, "b")] })).toBeGreaterThanOrEqual(200);
    const inline = `mutation { submitWorkload(input: { manifest: { kind: "Job", blob: "${"x".repeat(64 * 1024)}" } }) { id } }`;
    expect(cost(inline)).toBeGreaterThanOrEqual(64);
    const workloads = "mutation($i: [SubmitWorkloadInput!]!) { submitWorkloads(inputs: $i) { id } }";
    expect(
      cost(workloads, { i: [{ manifest: template(50) }, { manifest: template(50) }] }),
    ).toBeGreaterThanOrEqual(100);
    expect(
      cost("query($input: SubmitJobInput!) { renderJob(input: $input) }", { input: input(30) }),
    ).toBeGreaterThanOrEqual(130);
  });

  it("the bytes are taken from the token's bucket like any cost", async () => {
    const small = await startTestApi({
      rateLimits: {
        user: { burst: 20_000, perSecond: 1, concurrent: 0 },
        admin: { burst: 20_000, perSecond: 1, concurrent: 0 },
        agent: { burst: 20_000, perSecond: 1, concurrent: 0 },
      },
    });
    try {
      await gqlOk(small.url, small.adminToken, `mutation { createQueue(input: { name: "team" }) { name } }`);
      // A read that leaves about 50 points in the bucket (its cost is taken before it runs).
      const perJob = cost("{ jobs(first: 1000) { edges { node { id } } } }") / 1000;
      const first = Math.floor((20_000 - 50) / perJob);
      await gql(small.url, small.adminToken, `{ jobs(first: ${first}) { edges { node { id } } } }`);
      const r = await gql(small.url, small.adminToken, SUBMIT, { input: input(200) });
      const refused = r.errors?.[0] as { extensions?: Record<string, unknown> } | undefined;
      expect(refused?.extensions).toMatchObject({ code: "RATE_LIMITED" });
      expect(refused?.extensions?.cost).toBeGreaterThanOrEqual(200);
    } finally {
      await small.close();
    }
  }, 60_000);

  it("a template above 256 KiB is refused naming the task, a manifest above 1 MiB naming the manifest", async () => {
    const before = await countRows(t.db.url, "job");
    const r = await gql(t.url, t.adminToken, SUBMIT, { input: input(300) });
    expect(r.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      field: "input.tasks[0].template",
    });
    expect(r.errors?.[0]?.message).toMatch(/at most 262144 bytes/);
    const manifest = {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name: "huge", annotations: { blob: "x".repeat(1100 * 1024) } },
      spec: {
        template: { spec: { containers: [{ name: "m", image: "x", resources: { limits: { cpu: "1" } } }] } },
      },
    };
    const w = await gql(
      t.url,
      t.adminToken,
      "mutation($i: SubmitWorkloadInput!) { submitWorkload(input: $i) { id } }",
      {
        i: { manifest, queue: "team" },
      },
    );
    expect(w.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "input.manifest" });
    expect(w.errors?.[0]?.message).toMatch(/at most 1048576 bytes/);
    expect(await countRows(t.db.url, "job")).toBe(before);
  });
});
