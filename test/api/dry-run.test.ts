// dryRunSubmit and its kin over HTTP on real PostgreSQL and Redis: on a fleet where team-a holds
// both clusters beyond its share, team-b's gang would go where reclaim makes room, and the dry
// run's cluster and first-cycle evictions are those a real submit, admission pass and cycle then
// make; who may ask; bad input refused as submit refuses it; nothing stored or published; several
// jobs; a manifest.
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { defaultSchedulerConfig } from "../../src/core/index.js";
import type { SubmitDryRunView } from "../../src/cli/client/types.js";
import { runAdmission } from "../../workers/index.js";
import {
  gql,
  gqlOk,
  registerClusterWithAgent,
  reportNodes,
  startTestApi,
  type TestApi,
} from "../helpers/api.js";
import { runCycle } from "../helpers/cycle.js";
import { admin as pgAdmin } from "../helpers/db.js";
import { TEST_REDIS_URL } from "../helpers/redis.js";

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

let t: TestApi;
const agents = new Map<string, string>();
const tokens: Record<"memberB" | "memberA" | "viewer", string> = { memberB: "", memberA: "", viewer: "" };

const ok = <T = Record<string, unknown>>(q: string, v: Record<string, unknown> = {}, token = t.adminToken) =>
  gqlOk<T>(t.url, token, q, v);
const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
  pgAdmin(async (c) => (await c.query(text, params)).rows as T[], t.db.url);

const FIELDS = `name queue cluster named tier message estimatedStart estimatedCluster
  clusters { cluster chosen candidate message short { resource amount } estimatedStart estimated }
  evictions { job name queue cluster pods action message at now }`;
const DRY_RUN = `query($input: SubmitJobInput!) { dryRunSubmit(input: $input) { ${FIELDS} } }`;
const DRY_RUN_JOBS = `query($inputs: [SubmitJobInput!]!) { dryRunSubmitJobs(inputs: $inputs) { ${FIELDS} } }`;
const DRY_RUN_WORKLOAD = `query($input: SubmitWorkloadInput!) { dryRunSubmitWorkload(input: $input) { ${FIELDS} } }`;

type Answer = SubmitDryRunView;

const gpuJob = (name: string, queue: string, replicas: number, extra: Record<string, unknown> = {}) => ({
  name,
  queue,
  tasks: [{ name: "w", replicas, resources: { cpu: 1000, memory: "1Gi", gpu: 1 } }],
  ...extra,
});

/** Submits team-a's one-GPU jobs to the cluster, places them and has the agent report them running. */
async function fill(cluster: string, count: number): Promise<void> {
  const inputs = Array.from({ length: count }, (_, i) =>
    gpuJob(`a-${cluster}-${i}`, "team-a", 1, { cluster }),
  );
  const { submitJobs } = await ok<{ submitJobs: { id: string }[] }>(
    "mutation($i: [SubmitJobInput!]!) { submitJobs(inputs: $i) { id } }",
    { i: inputs },
  );
  await runCycle(t.server.store, cluster);
  await ok(
    "mutation($c: String!, $u: [PodStatusReport!]!) { reportPodStatus(cluster: $c, updates: $u) }",
    { c: cluster, u: submitJobs.map((j) => ({ job: j.id, pod: "w-0", state: "RUNNING" })) },
    agents.get(cluster)!,
  );
}

async function token(name: string, role: string, queues: string[] = []): Promise<string> {
  const r = await ok<{ createToken: { secret: string } }>(
    "mutation($i: CreateTokenInput!) { createToken(input: $i) { secret } }",
    { i: { name, role, queues } },
  );
  return r.createToken.secret;
}

/** Rows that a dry run must leave as they are. */
const counts = async () =>
  (
    await sql(`SELECT (SELECT count(*) FROM job)::int AS jobs, (SELECT count(*) FROM pod)::int AS pods,
      (SELECT count(*) FROM event)::int AS events, (SELECT count(*) FROM bind_request)::int AS binds,
      (SELECT count(*) FROM job_estimate)::int AS estimates,
      (SELECT max(generation)::text FROM cluster) AS generation`)
  )[0];

beforeAll(async () => {
  t = await startTestApi();
  for (const q of [
    '{ name: "org" }',
    '{ name: "team-a", parent: "org" }',
    '{ name: "team-b", parent: "org" }',
  ])
    await ok(`mutation { createQueue(input: ${q}) { name } }`);
  for (const q of ["team-a", "team-b"])
    await ok(`mutation { setQueueQuota(input: { queue: "${q}", resource: GPU, deserved: 4 }) { name } }`);
  // c1: two nodes of four GPUs; c2: one node of four (team-b's fair share there is smaller).
  const shapes: Record<string, number> = { c1: 2, c2: 1 };
  for (const [cluster, nodes] of Object.entries(shapes)) {
    const agent = await registerClusterWithAgent(t, cluster);
    agents.set(cluster, agent);
    await reportNodes(
      t,
      agent,
      cluster,
      Array.from({ length: nodes }, (_, i) => ({
        name: `${cluster}-n${i}`,
        capacity: { cpu: 64000, memory: "512Gi", gpu: 4 },
      })),
    );
  }
  await fill("c1", 8);
  await fill("c2", 4);
  tokens.memberB = await token("member-b", "MEMBER", ["team-b"]);
  tokens.memberA = await token("member-a", "MEMBER", ["team-a"]);
  tokens.viewer = await token("viewer", "VIEWER");
});
afterAll(async () => t?.close());

describe("dryRunSubmit", () => {
  it("equals what a real submit, the admission pass and the cycle then do", async () => {
    const input = gpuJob("b-gang", "team-b", 4);
    const { dryRunSubmit: dry } = await ok<{ dryRunSubmit: Answer }>(DRY_RUN, { input }, tokens.memberB);
    expect(dry.cluster).toBe("c1");
    expect(dry.tier).toBe(1);
    expect(dry.message).toMatch(/reclaim makes room/);
    const c2 = dry.clusters.find((c) => c.cluster === "c2")!;
    expect(c2.chosen).toBe(false);
    expect(dry.clusters[0]).toMatchObject({ cluster: "c1", chosen: true, estimated: true });
    const now = dry.evictions.filter((e) => e.now);
    expect(now.length).toBeGreaterThan(0);
    for (const e of now) expect(e).toMatchObject({ queue: "team-a", cluster: "c1", action: "reclaim" });
    expect(now.reduce((n, e) => n + e.pods, 0)).toBe(4);

    const { submitJob } = await ok<{ submitJob: { id: string } }>(
      "mutation($input: SubmitJobInput!) { submitJob(input: $input) { id } }",
      { input },
      tokens.memberB,
    );
    const pass = await runAdmission({
      store: t.server.store,
      config: defaultSchedulerConfig(),
      usageWindow: null,
      readmitAfterMs: 0,
      batch: 1000,
      batchPods: 2000,
      log: pino({ level: "silent" }),
    });
    expect(pass.assigned.map((a) => [a.job, a.cluster, a.tier])).toEqual([
      [submitJob.id, dry.cluster, dry.tier],
    ]);
    const cycle = await runCycle(t.server.store, "c1");
    const evicted = new Map<string, number>();
    for (const b of cycle.bindRequests.filter((b) => b.kind === "EVICT"))
      evicted.set(b.jobId, (evicted.get(b.jobId) ?? 0) + 1);
    expect(new Map(now.map((e) => [e.job, e.pods]))).toEqual(evicted);
  });
});

// biome-ignore lint/suspicious/noExplicitAny: a free-form manifest, changed in place by a test
const manifest = (name: string, gpu: number): Record<string, any> => ({
  apiVersion: "batch/v1",
  kind: "Job",
  metadata: { name, labels: { "fleetq.io/queue": "team-b" } },
  spec: {
    parallelism: 2,
    completions: 2,
    template: {
      spec: {
        containers: [{ name: "train", image: "trainer:1", resources: { limits: { "nvidia.com/gpu": gpu } } }],
        restartPolicy: "Never",
      },
    },
  },
});

describe("what a dry run changes", () => {
  it("stores and publishes nothing: no row, no event, no Redis message", async () => {
    const before = await counts();
    const redis = new Redis(TEST_REDIS_URL);
    const heard: string[] = [];
    await redis.psubscribe(`${t.redisPrefix}*`);
    redis.on("pmessage", (_p, channel, message) => heard.push(`${channel}: ${message}`));
    try {
      await ok(DRY_RUN, { input: gpuJob("quiet", "team-b", 2) }, tokens.memberB);
      await ok(DRY_RUN_JOBS, { inputs: [gpuJob("q1", "team-b", 1), gpuJob("q2", "team-b", 1)] });
      await ok(DRY_RUN_WORKLOAD, { input: { manifest: manifest("quiet-job", 1) } }, tokens.memberB);
      await new Promise((r) => setTimeout(r, 300)); // anything published would have arrived
    } finally {
      redis.disconnect();
    }
    expect(heard).toEqual([]);
    expect(await counts()).toEqual(before);
  });
});

describe("who may ask", () => {
  it("refuses a VIEWER and a MEMBER of another queue, as submitJob does", async () => {
    for (const who of [tokens.viewer, tokens.memberA]) {
      const r = await gql(t.url, who, DRY_RUN, { input: gpuJob("no", "team-b", 1) });
      expect(r.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
      const w = await gql(t.url, who, DRY_RUN_WORKLOAD, { input: { manifest: manifest("no", 1) } });
      expect(w.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
      const m = await gql(t.url, who, DRY_RUN_JOBS, { inputs: [gpuJob("no", "team-b", 1)] });
      expect(m.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    }
    const mine = await ok<{ dryRunSubmit: Answer }>(
      DRY_RUN,
      { input: gpuJob("a", "team-a", 1) },
      tokens.memberA,
    );
    expect(mine.dryRunSubmit.queue).toBe("team-a");
  });
});

describe("bad input", () => {
  it("is refused with the field submitJob names, and the same message", async () => {
    const input = gpuJob("bad", "team-b", 0);
    const dry = await gql(t.url, tokens.memberB, DRY_RUN, { input });
    const real = await gql(
      t.url,
      tokens.memberB,
      "mutation($input: SubmitJobInput!) { submitJob(input: $input) { id } }",
      {
        input,
      },
    );
    expect(dry.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      field: "input.tasks[0].replicas",
    });
    expect(dry.errors?.[0]?.message).toBe(real.errors?.[0]?.message);
  });

  it("names the document of several, and refuses a bad manifest by its field", async () => {
    const many = await gql(t.url, t.adminToken, DRY_RUN_JOBS, {
      inputs: [gpuJob("fine", "team-b", 1), gpuJob("bad", "team-b", 1, { priority: -5 })],
    });
    expect(many.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      field: "inputs[1].priority",
    });
    const unknown = await gql(t.url, t.adminToken, DRY_RUN_JOBS, {
      inputs: [gpuJob("fine", "team-b", 1), gpuJob("lost", "nowhere", 1)],
    });
    expect(unknown.errors?.[0]?.extensions).toMatchObject({ code: "NOT_FOUND", field: "inputs[1].queue" });
    const m = manifest("bad", 1);
    m.spec.template.spec.containers[0]!.securityContext = { privileged: true };
    await ok('mutation { updateQueue(name: "team-b", input: { podSecurity: BASELINE }) { name } }');
    const w = await gql(t.url, t.adminToken, DRY_RUN_WORKLOAD, { input: { manifest: m } });
    await ok('mutation { updateQueue(name: "team-b", input: { podSecurity: PRIVILEGED }) { name } }');
    expect(w.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      field: "input.manifest.spec.template.spec.containers[0].securityContext.privileged",
    });
  });

  it("refuses an unknown queue and an unknown cluster", async () => {
    const q = await gql(t.url, t.adminToken, DRY_RUN, { input: gpuJob("x", "nowhere", 1) });
    expect(q.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
    const c = await gql(t.url, t.adminToken, DRY_RUN, { input: gpuJob("x", "team-b", 1, { cluster: "c9" }) });
    expect(c.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "input.cluster" });
  });
});

describe("several jobs, a named cluster, a manifest, no cluster at all", () => {
  it("answers each job of a batch, in order, decided together", async () => {
    const { dryRunSubmitJobs: list } = await ok<{ dryRunSubmitJobs: Answer[] }>(
      DRY_RUN_JOBS,
      {
        inputs: [
          gpuJob("m-0", "team-a", 1, { priority: 10 }),
          gpuJob("m-1", "team-b", 1),
          gpuJob("m-2", "team-b", 1, { cluster: "c2" }),
        ],
      },
      t.adminToken,
    );
    expect(list.map((a) => a.name)).toEqual(["m-0", "m-1", "m-2"]);
    expect(list[2]).toMatchObject({ cluster: "c2", named: true, tier: null });
    for (const a of list.slice(0, 2)) expect(a.clusters.map((c) => c.cluster).sort()).toEqual(["c1", "c2"]);
  });

  it("answers for a manifest as submitWorkload would take it", async () => {
    const { dryRunSubmitWorkload: a } = await ok<{ dryRunSubmitWorkload: Answer }>(
      DRY_RUN_WORKLOAD,
      { input: { manifest: manifest("trainer", 1) } },
      tokens.memberB,
    );
    expect(a).toMatchObject({ name: "trainer", queue: "team-b", named: false });
    expect(a.clusters).toHaveLength(2);
  });

  it("says, per cluster, why none takes a gang that fits nowhere", async () => {
    const { dryRunSubmit: a } = await ok<{ dryRunSubmit: Answer }>(
      DRY_RUN,
      {
        input: gpuJob("huge", "team-b", 1, {
          tasks: [{ name: "w", replicas: 1, resources: { cpu: 1000, memory: "1Gi", gpu: 16 } }],
        }),
      },
      tokens.memberB,
    );
    expect(a.cluster).toBeNull();
    expect(a.tier).toBeNull();
    expect(a.message).toMatch(/no cluster can run the gang now/);
    expect(a.clusters.map((c) => c.cluster).sort()).toEqual(["c1", "c2"]);
    for (const c of a.clusters) expect(c.message).toMatch(/can never fit here/);
    expect(a.evictions).toEqual([]);
  });
});
