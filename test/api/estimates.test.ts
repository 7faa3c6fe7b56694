// Job.estimatedStart / estimatedCluster end to end on real PostgreSQL: the workers' estimate run
// (runEstimates: the live snapshot simulated forward with the core) stores them, the API shows
// them on pending jobs only, `fleetq why` and `fleetq get job` print them.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { defaultSchedulerConfig } from "../../src/core/index.js";
import { ClusterCache } from "../../src/store/index.js";
import { runEstimates } from "../../workers/index.js";
import { runCli } from "../cli/run-cli.js";
import { gqlOk, reportNodes, startTestApi, type TestApi } from "../helpers/api.js";
import { runCycle } from "../helpers/cycle.js";
import { admin as pgAdmin } from "../helpers/db.js";

vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });

let t: TestApi;
const SUBMIT = "mutation($input: SubmitJobInput!) { submitJob(input: $input) { id } }";
const ESTIMATE = "query($id: ID!) { job(id: $id) { state estimatedStart estimatedCluster } }";
const ok = <T = Record<string, unknown>>(q: string, v: Record<string, unknown> = {}) =>
  gqlOk<T>(t.url, t.adminToken, q, v);
const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
  pgAdmin(async (c) => (await c.query(text, params)).rows as T[], t.db.url);
const submit = async (name: string, input: Record<string, unknown> = {}) =>
  (
    await ok<{ submitJob: { id: string } }>(SUBMIT, {
      input: {
        name,
        queue: "team",
        cluster: "c1",
        tasks: [{ name: "w", replicas: 1, resources: { cpu: 1000, memory: "1Gi", gpu: 4 } }],
        ...input,
      },
    })
  ).submitJob.id;
const estimate = async (id: string) =>
  (
    await ok<{ job: { state: string; estimatedStart: string | null; estimatedCluster: string | null } }>(
      ESTIMATE,
      { id },
    )
  ).job;

const lastStart = async (id: string) =>
  (
    await sql<{ ms: number }>(
      "SELECT (extract(epoch from last_start_at) * 1000)::float8 AS ms FROM job WHERE id = $1",
      [id],
    )
  )[0]!.ms;
const stored = async () => (await sql<{ n: number }>("SELECT count(*)::int AS n FROM job_estimate"))[0]!.n;

let first: string;
let second: string;

beforeAll(async () => {
  t = await startTestApi();
  await ok('mutation { createQueue(input: { name: "team" }) { name } }');
  await ok('mutation { setQueueQuota(input: { queue: "team", resource: GPU, deserved: -1 }) { name } }');
  await ok('mutation { registerCluster(input: { name: "c1" }) { name } }');
  const agent = (
    await ok<{ createToken: { secret: string } }>(
      'mutation { createToken(input: { name: "agent-c1", role: AGENT, cluster: "c1" }) { secret } }',
    )
  ).createToken.secret;
  await reportNodes(t, agent, "c1", [{ name: "gpu-0", capacity: { cpu: 32000, memory: "256Gi", gpu: 4 } }]);
  first = await submit("first");
  await runCycle(t.server.store, "c1");
  second = await submit("second");
  await runCycle(t.server.store, "c1");
});
afterAll(async () => t?.close());

describe("estimated start", () => {
  it("unknown while no run time is known; null on jobs that are not pending", async () => {
    const r = await runEstimates(t.server.store, defaultSchedulerConfig());
    expect(r).toMatchObject({ clusters: 1, jobs: 1, estimated: 0 });
    expect(await estimate(second)).toEqual({
      state: "PENDING",
      estimatedStart: null,
      estimatedCluster: null,
    });
    expect((await estimate(first)).estimatedStart).toBeNull();
  });

  it("from the queue's run-time history: the running job's end is the waiting job's start", async () => {
    // One job of the queue that ran 10 minutes and succeeded: the queue's running estimate.
    const done = await submit("done", { cluster: "c1" });
    await sql(
      `UPDATE job SET state = 'SUCCEEDED', started_at = now() - interval '20 minutes',
         finished_at = now() - interval '10 minutes' WHERE id = $1`,
      [done],
    );
    await sql("UPDATE pod SET state = 'SUCCEEDED' WHERE job_id = $1", [done]);
    const ms = await lastStart(first);
    const r = await runEstimates(t.server.store, defaultSchedulerConfig());
    expect(r).toMatchObject({ clusters: 1, jobs: 1, estimated: 1 });
    const e = await estimate(second);
    expect(e).toEqual({
      state: "PENDING",
      estimatedStart: new Date(ms + 600_000).toISOString(),
      estimatedCluster: "c1",
    });
    // Stored apart from the job: nothing the scheduler's caches track moved.
    expect(await stored()).toBe(1);

    const url = t.url.replace(/\/graphql$/, "");
    const why = await runCli(["why", second], { url, token: t.adminToken });
    expect(why.code).toBe(0);
    expect(why.stdout).toContain(`Expected to start: ${e.estimatedStart} on c1 (in `);
    const get = await runCli(["get", "job", second], { url, token: t.adminToken });
    expect(get.stdout).toContain(`Estimated:  ${e.estimatedStart} on c1`);
    const json = JSON.parse(
      (await runCli(["-o", "json", "why", second], { url, token: t.adminToken })).stdout,
    );
    expect(json).toMatchObject({ estimatedStart: e.estimatedStart, estimatedCluster: "c1" });
  });

  it("a job that stops waiting loses its estimate at the next run", async () => {
    await ok("mutation($id: ID!) { cancelJob(id: $id) { id } }", { id: second });
    expect((await estimate(second)).estimatedStart).toBeNull();
    await runEstimates(t.server.store, defaultSchedulerConfig());
    expect(await stored()).toBe(0);
  });

  it("a declared expected run time comes before the queue's history", async () => {
    const ms = await lastStart(first);
    const a = await submit("a", { expectedRuntimeSeconds: 300 });
    const b = await submit("b", { maxRuntimeSeconds: 120 });
    await runEstimates(t.server.store, defaultSchedulerConfig());
    // a after first (the queue's 10 minutes), b after a's declared 5 minutes.
    expect((await estimate(a)).estimatedStart).toBe(new Date(ms + 600_000).toISOString());
    expect((await estimate(b)).estimatedStart).toBe(new Date(ms + 900_000).toISOString());
  });

  it("a job waiting for admission is estimated on the clusters it may go to: the earliest", async () => {
    const ms = await lastStart(first);
    const anywhere = await submit("anywhere", { cluster: undefined, expectedRuntimeSeconds: 60 });
    await runEstimates(t.server.store, defaultSchedulerConfig());
    // after b, which runs at most 2 minutes from +15 min
    expect(await estimate(anywhere)).toEqual({
      state: "PENDING",
      estimatedStart: new Date(ms + 1_020_000).toISOString(),
      estimatedCluster: "c1",
    });
    // a selector no cluster matches: no estimate
    const nowhere = await submit("nowhere", {
      cluster: undefined,
      clusterSelector: [{ key: "region", values: ["mars"] }],
    });
    await runEstimates(t.server.store, defaultSchedulerConfig());
    expect(await estimate(nowhere)).toEqual({
      state: "PENDING",
      estimatedStart: null,
      estimatedCluster: null,
    });
    expect((await estimate(anywhere)).estimatedCluster).toBe("c1");
  });

  it("on a worker's cached view of the cluster: what a full read gives, changes since included", async () => {
    const config = defaultSchedulerConfig();
    const store = t.server.store;
    const estimates = () =>
      sql("SELECT job_id::text, cluster_name, estimated_start FROM job_estimate ORDER BY job_id");
    const cache = new ClusterCache(store);
    await cache.refresh("c1");
    const late = await submit("late", { expectedRuntimeSeconds: 60 });
    const now = new Date();
    await runEstimates(store, config, { now });
    const full = await estimates();
    expect((await estimate(late)).estimatedStart).not.toBeNull();
    await sql("DELETE FROM job_estimate");
    const loads = cache.fullLoads;
    await runEstimates(store, config, { now, views: { cache, usage: undefined } });
    expect(await estimates()).toEqual(full);
    // Brought up to date from what changed, not read again.
    expect(cache.fullLoads).toBe(loads);
    expect(cache.lastRefresh.get("c1")).toBe("delta");
  });
});
