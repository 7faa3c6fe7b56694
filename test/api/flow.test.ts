// Every query and mutation over HTTP against the real server (real PostgreSQL, real Redis), in
// the order a deployment lives: an admin shapes queues and clusters, an agent reports its nodes,
// a team submits, the scheduler places (one real cycle through the store and the core), the
// agent carries the binds out, everyone watches.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCycle } from "../helpers/cycle.js";
import { gql, gqlOk, startTestApi, type TestApi } from "../helpers/api.js";

let t: TestApi;
let admin: string;
let agent: string;
let member: string;
let viewer: string;
let jobId: string;

const SUBMIT = `mutation($input: SubmitJobInput!) { submitJob(input: $input) { id name state priority minMember preemptible namespace
  queue { name } cluster { name } pods { name state node gpuGroups task resources { cpu memory gpu gpuMemory } }
  pendingReason { message clusters { cluster message short { resource amount } } } createdAt submittedBy idempotencyKey } }`;

const token = async (input: Record<string, unknown>) =>
  (
    await gqlOk<{ createToken: { id: string; secret: string } }>(
      t.url,
      admin,
      "mutation($input: CreateTokenInput!) { createToken(input: $input) { id secret } }",
      { input },
    )
  ).createToken;

beforeAll(async () => {
  t = await startTestApi();
  admin = t.adminToken;
});
afterAll(async () => t?.close());

describe("admin shapes the system", () => {
  it("creates the queue tree, moves and reprioritises queues, sets quotas", async () => {
    for (const input of [
      { name: "org" },
      { name: "research", parent: "org", priority: 120 },
      { name: "team-a", parent: "research" },
      { name: "team-b", parent: "org" },
      { name: "scratch" },
    ]) {
      await gqlOk(
        t.url,
        admin,
        "mutation($input: CreateQueueInput!) { createQueue(input: $input) { name } }",
        { input },
      );
    }
    const moved = await gqlOk<{ updateQueue: { name: string; priority: number; parent: { name: string } } }>(
      t.url,
      admin,
      `mutation { updateQueue(name: "team-b", input: { parent: "research", priority: 80 }) { name priority parent { name } } }`,
    );
    expect(moved.updateQueue).toEqual({ name: "team-b", priority: 80, parent: { name: "research" } });
    const quota = await gqlOk<{ setQueueQuota: { name: string; quotas: unknown[] } }>(
      t.url,
      admin,
      `mutation { setQueueQuota(input: { queue: "team-a", resource: GPU, deserved: 4, limit: 16, overQuotaWeight: 2 }) { name quotas { cluster resource deserved limit overQuotaWeight } } }`,
    );
    expect(quota.setQueueQuota.quotas).toEqual([
      { cluster: null, resource: "GPU", deserved: 4, limit: 16, overQuotaWeight: 2 },
    ]);
    expect(await gqlOk(t.url, admin, `mutation { deleteQueue(name: "scratch") }`)).toEqual({
      deleteQueue: true,
    });
  });

  it("registers clusters, sets a per-cluster quota override, creates tokens", async () => {
    const c = await gqlOk<{ registerCluster: unknown }>(
      t.url,
      admin,
      `mutation { registerCluster(input: { name: "c1", labels: [{ key: "region", value: "eu" }] }) { name labels { key value } state cordoned generation nodes { name } } }`,
    );
    expect(c.registerCluster).toEqual({
      name: "c1",
      labels: [{ key: "region", value: "eu" }],
      state: "NOT_READY",
      cordoned: false,
      generation: 0,
      nodes: [],
    });
    await gqlOk(t.url, admin, `mutation { registerCluster(input: { name: "c2" }) { name } }`);
    await gqlOk(
      t.url,
      admin,
      `mutation { setQueueQuota(input: { queue: "team-a", cluster: "c1", resource: GPU, deserved: 8 }) { name } }`,
    );
    agent = (await token({ name: "agent-c1", role: "AGENT", cluster: "c1" })).secret;
    member = (await token({ name: "team-a-ci", role: "MEMBER", queues: ["team-a"] })).secret;
    viewer = (await token({ name: "dashboard", role: "VIEWER" })).secret;
    const tokens = await gqlOk<{
      tokens: { name: string; role: string; queues: string[]; cluster: string | null; revokedAt: null }[];
    }>(t.url, admin, "{ tokens { name role queues cluster revokedAt } }");
    expect(tokens.tokens.map((x) => [x.name, x.role, x.queues, x.cluster])).toEqual([
      ["bootstrap-admin", "ADMIN", [], null],
      ["agent-c1", "AGENT", [], "c1"],
      ["team-a-ci", "MEMBER", ["team-a"], null],
      ["dashboard", "VIEWER", [], null],
    ]);
    expect((await gqlOk(t.url, member, "{ me { name role queues cluster } }")).me).toEqual({
      name: "team-a-ci",
      role: "MEMBER",
      queues: ["team-a"],
      cluster: null,
    });
  });
});

describe("the agent reports its cluster", () => {
  it("reports node inventory; the cluster shows capacity", async () => {
    const nodes = [0, 1].map((i) => ({
      name: `gpu-${i}`,
      capacity: { cpu: 32000, memory: "256Gi", gpu: 4, gpuMemory: 4 * 81920 },
      labels: [{ key: "rack", value: `r${i}` }],
      gpuModel: "H100",
      taints: i === 1 ? ["dedicated=ml:PreferNoSchedule"] : [],
    }));
    const r = await gqlOk(
      t.url,
      agent,
      'mutation($n: [NodeReport!]!) { reportNodes(cluster: "c1", nodes: $n, complete: true) }',
      { n: nodes },
    );
    expect(r).toEqual({ reportNodes: 2 });
    const c = await gqlOk<{ cluster: Record<string, unknown> }>(
      t.url,
      viewer,
      `{ cluster(name: "c1") { state generation capacity { cpu memory gpu gpuMemory } allocated { gpu } free { gpu }
      nodes { name gpuModel unschedulable ready taints labels { key value } capacity { gpu gpuMemory } } } }`,
    );
    expect(c.cluster).toMatchObject({
      state: "READY",
      generation: 1,
      capacity: { cpu: 64000, memory: String(512 * 2 ** 30), gpu: 8, gpuMemory: 8 * 81920 },
      allocated: { gpu: 0 },
      free: { gpu: 8 },
    });
    expect((c.cluster.nodes as unknown[])[1]).toEqual({
      name: "gpu-1",
      gpuModel: "H100",
      unschedulable: false,
      ready: true,
      taints: ["dedicated=ml:PreferNoSchedule"],
      labels: [{ key: "rack", value: "r1" }],
      capacity: { gpu: 4, gpuMemory: 4 * 81920 },
    });
  });
});

describe("a team submits and watches", () => {
  it("submits a job with defaults applied and a reason to wait", async () => {
    const r = await gqlOk<{ submitJob: Record<string, unknown> & { id: string } }>(t.url, member, SUBMIT, {
      input: {
        name: "train-llm",
        queue: "team-a",
        cluster: "c1",
        idempotencyKey: "build-7",
        tasks: [{ name: "worker", replicas: 2, resources: { cpu: 4000, memory: "32Gi", gpu: 2 } }],
      },
    });
    jobId = r.submitJob.id;
    expect(r.submitJob).toMatchObject({
      name: "train-llm",
      state: "PENDING",
      priority: 50,
      minMember: 2,
      preemptible: true,
      namespace: "fleetq-org", // its top queue's own namespace
      queue: { name: "team-a" },
      cluster: { name: "c1" },
      submittedBy: "team-a-ci",
      idempotencyKey: "build-7",
      pendingReason: { message: "waiting for the scheduler on cluster c1", clusters: [] },
      pods: [
        {
          name: "worker-0",
          state: "PENDING",
          node: null,
          gpuGroups: [],
          task: "worker",
          resources: { cpu: 4000, memory: String(32 * 2 ** 30), gpu: 2, gpuMemory: 0 },
        },
        {
          name: "worker-1",
          state: "PENDING",
          node: null,
          gpuGroups: [],
          task: "worker",
          resources: { cpu: 4000, memory: String(32 * 2 ** 30), gpu: 2, gpuMemory: 0 },
        },
      ],
    });
  });

  it("the scheduler places it; the job shows pods on nodes, BindRequests and events", async () => {
    const committed = await runCycle(t.server.store, "c1");
    expect(committed.bindRequests).toHaveLength(2);
    const r = await gqlOk<{ job: Record<string, unknown> }>(
      t.url,
      viewer,
      `query($id: ID!) { job(id: $id) { state pendingReason { message } startedAt
      pods { name state node } bindRequests { kind state node pod attempts generation cluster job } events { kind message job queue cluster actor data } } }`,
      { id: jobId },
    );
    expect(r.job.state).toBe("ADMITTED");
    expect(r.job.pendingReason).toBeNull();
    expect((r.job.pods as { state: string }[]).every((p) => p.state === "BINDING")).toBe(true);
    expect(r.job.bindRequests).toEqual(
      [0, 1].map(() =>
        expect.objectContaining({
          kind: "BIND",
          state: "PENDING",
          attempts: 0,
          generation: 2,
          cluster: "c1",
          job: jobId,
        }),
      ),
    );
    expect((r.job.events as { kind: string }[]).map((e) => e.kind)).toEqual([
      "job.submitted",
      "pods.bound",
      "job.admitted",
    ]);
    expect((r.job.events as unknown[])[0]).toMatchObject({
      job: jobId,
      queue: "team-a",
      cluster: "c1",
      actor: "team-a-ci",
      data: null,
    });
    const outbox = await gqlOk<{ bindRequests: { id: string; state: string }[] }>(
      t.url,
      agent,
      `{ bindRequests(cluster: "c1", state: PENDING) { id state } }`,
    );
    expect(outbox.bindRequests).toHaveLength(2);
  });

  it("the agent reports bind results and pod phases; the job runs, the nodes show what it holds", async () => {
    const outbox = await gqlOk<{ bindRequests: { id: string; pod: string }[] }>(
      t.url,
      agent,
      `{ bindRequests(cluster: "c1") { id pod } }`,
    );
    const results = outbox.bindRequests.map((b) => ({ bindRequest: b.id, ok: true }));
    expect(
      await gqlOk(
        t.url,
        agent,
        'mutation($r: [BindResultReport!]!) { reportBindResult(cluster: "c1", results: $r) }',
        { r: results },
      ),
    ).toEqual({ reportBindResult: 2 });
    // A report may name the bind whose run it is about (the current one here: it applies).
    const updates = ["worker-0", "worker-1"].map((pod) => ({
      job: jobId,
      pod,
      state: "RUNNING",
      bindRequest: outbox.bindRequests.find((b) => b.pod === pod)!.id,
    }));
    expect(
      await gqlOk(
        t.url,
        agent,
        'mutation($u: [PodStatusReport!]!) { reportPodStatus(cluster: "c1", updates: $u) }',
        { u: updates },
      ),
    ).toEqual({ reportPodStatus: 2 });
    const j = await gqlOk<{
      job: { state: string; startedAt: string | null; bindRequests: { state: string }[] };
    }>(t.url, viewer, `query($id: ID!) { job(id: $id) { state startedAt bindRequests { state } } }`, {
      id: jobId,
    });
    expect(j.job.state).toBe("RUNNING");
    expect(j.job.startedAt).not.toBeNull();
    expect(j.job.bindRequests.map((b) => b.state)).toEqual(["SUCCEEDED", "SUCCEEDED"]);
    const c = await gqlOk<{ cluster: { allocated: Record<string, unknown>; free: Record<string, unknown> } }>(
      t.url,
      viewer,
      `{ cluster(name: "c1") { allocated { cpu memory gpu } free { gpu } } }`,
    );
    expect(c.cluster.allocated).toEqual({ cpu: 8000, memory: String(64 * 2 ** 30), gpu: 4 });
    expect(c.cluster.free).toEqual({ gpu: 4 });
  });

  it("lists jobs with filters and cursor pagination", async () => {
    for (let i = 0; i < 4; i++) {
      await gqlOk(t.url, member, SUBMIT, {
        input: {
          name: `sweep-${i}`,
          queue: "team-a",
          tasks: [{ name: "w", replicas: 1, resources: { cpu: 100 } }],
        },
      });
    }
    const all: string[] = [];
    let after: string | null = null;
    for (;;) {
      const page: {
        jobs: {
          edges: { cursor: string; node: { name: string } }[];
          pageInfo: { hasNextPage: boolean; endCursor: string | null };
        };
      } = await gqlOk(
        t.url,
        viewer,
        `query($after: String) { jobs(filter: { queue: "research" }, first: 2, after: $after) { edges { cursor node { name } } pageInfo { hasNextPage endCursor } } }`,
        { after },
      );
      all.push(...page.jobs.edges.map((e) => e.node.name));
      if (!page.jobs.pageInfo.hasNextPage) break;
      after = page.jobs.pageInfo.endCursor;
    }
    expect(all).toEqual(["sweep-3", "sweep-2", "sweep-1", "sweep-0", "train-llm"]);
    const running = await gqlOk<{ jobs: { edges: { node: { name: string } }[] } }>(
      t.url,
      viewer,
      `{ jobs(filter: { state: RUNNING, cluster: "c1" }) { edges { node { name } } } }`,
    );
    expect(running.jobs.edges.map((e) => e.node.name)).toEqual(["train-llm"]);
    const none = await gqlOk<{
      jobs: { edges: unknown[]; pageInfo: { hasNextPage: boolean; endCursor: null } };
    }>(
      t.url,
      viewer,
      `{ jobs(filter: { queue: "team-b" }) { edges { cursor } pageInfo { hasNextPage endCursor } } }`,
    );
    expect(none.jobs).toEqual({ edges: [], pageInfo: { hasNextPage: false, endCursor: null } });
  });

  it("shows the queue tree with quotas", async () => {
    const q = await gqlOk<{ queues: unknown[]; queue: unknown }>(
      t.url,
      viewer,
      `{ queues { name priority parent { name } children { name } } queue(name: "team-a") { name quotas { cluster resource deserved limit overQuotaWeight } } }`,
    );
    expect(q.queues).toEqual([
      { name: "org", priority: 100, parent: null, children: [{ name: "research" }] },
      {
        name: "research",
        priority: 120,
        parent: { name: "org" },
        children: [{ name: "team-a" }, { name: "team-b" }],
      },
      { name: "team-a", priority: 100, parent: { name: "research" }, children: [] },
      { name: "team-b", priority: 80, parent: { name: "research" }, children: [] },
    ]);
    expect(q.queue).toEqual({
      name: "team-a",
      quotas: [
        { cluster: null, resource: "GPU", deserved: 4, limit: 16, overQuotaWeight: 2 },
        { cluster: "c1", resource: "GPU", deserved: 8, limit: null, overQuotaWeight: null },
      ],
    });
  });

  it("answers fairShare per cluster and in total, from the core's proportion plugin", async () => {
    const per = await gqlOk<{
      fairShare: {
        queue: string;
        cluster: string | null;
        deserved: { gpu: number };
        allocated: { gpu: number; cpu: number };
        requested: { gpu: number };
        fairShare: { gpu: number };
        limit: { gpu: number };
      }[];
    }>(
      t.url,
      viewer,
      `{ fairShare(cluster: "c1") { queue cluster deserved { gpu cpu memory } fairShare { gpu } allocated { gpu cpu } requested { gpu } limit { gpu } usage { gpu } } }`,
    );
    const teamA = per.fairShare.find((r) => r.queue === "team-a")!;
    expect(teamA).toMatchObject({
      cluster: "c1",
      deserved: { gpu: 8 },
      allocated: { gpu: 4, cpu: 8000 },
      limit: { gpu: 16 },
    });
    expect(teamA.fairShare.gpu).toBeGreaterThanOrEqual(4);
    expect(per.fairShare.every((r) => r.cluster === "c1")).toBe(true);
    const all = await gqlOk<{
      fairShare: {
        queue: string;
        cluster: string | null;
        deserved: { gpu: number };
        allocated: { gpu: number };
      }[];
    }>(t.url, viewer, `{ fairShare { queue cluster deserved { gpu } allocated { gpu } } }`);
    const rows = all.fairShare.filter((r) => r.queue === "team-a");
    expect(rows.map((r) => r.cluster)).toEqual(["c1", "c2", null]);
    const [c1, c2, total] = rows;
    expect(total!.deserved.gpu).toBe(c1!.deserved.gpu + c2!.deserved.gpu);
    expect(c2!.deserved.gpu).toBe(4);
    expect(total!.allocated.gpu).toBe(4);
  });

  it("a retry with the same idempotency key returns the same job", async () => {
    const again = await gqlOk<{ submitJob: { id: string } }>(t.url, member, SUBMIT, {
      input: {
        name: "train-llm",
        queue: "team-a",
        cluster: "c1",
        idempotencyKey: "build-7",
        tasks: [{ name: "worker", replicas: 2, resources: { cpu: 4000, memory: "32Gi", gpu: 2 } }],
      },
    });
    expect(again.submitJob.id).toBe(jobId);
  });

  it("cancels: running pods are evicted, the job is CANCELLED", async () => {
    const r = await gqlOk<{
      cancelJob: {
        state: string;
        finishedAt: string;
        pods: { state: string }[];
        bindRequests: { kind: string; state: string }[];
      };
    }>(
      t.url,
      member,
      `mutation($id: ID!) { cancelJob(id: $id) { state finishedAt pods { state } bindRequests { kind state } } }`,
      { id: jobId },
    );
    expect(r.cancelJob.state).toBe("CANCELLED");
    expect(r.cancelJob.pods.map((p) => p.state)).toEqual(["RELEASING", "RELEASING"]);
    expect(r.cancelJob.bindRequests.filter((b) => b.kind === "EVICT").map((b) => b.state)).toEqual([
      "PENDING",
      "PENDING",
    ]);
  });
});

describe("admin winds down", () => {
  it("cordons, refuses to delete a cluster with unfinished jobs, deletes an idle one, revokes a token", async () => {
    const cordoned = await gqlOk(
      t.url,
      admin,
      `mutation { cordonCluster(name: "c1", cordoned: true) { name cordoned } }`,
    );
    expect(cordoned).toEqual({ cordonCluster: { name: "c1", cordoned: true } });
    await gqlOk(t.url, member, SUBMIT, {
      input: {
        name: "stuck",
        queue: "team-a",
        cluster: "c2",
        tasks: [{ name: "w", replicas: 1, resources: { cpu: 100 } }],
      },
    });
    const busy = await gql(t.url, admin, `mutation { deleteCluster(name: "c2") }`);
    expect(busy.errors?.[0]?.extensions).toEqual({ code: "CONFLICT", field: "name" });
    await gqlOk(t.url, admin, `mutation { registerCluster(input: { name: "c3" }) { name } }`);
    expect(await gqlOk(t.url, admin, `mutation { deleteCluster(name: "c3") }`)).toEqual({
      deleteCluster: true,
    });
    expect(await gqlOk(t.url, admin, `{ cluster(name: "c3") { name } }`)).toEqual({ cluster: null });

    const v = await gqlOk<{ tokens: { id: string; name: string }[] }>(t.url, admin, "{ tokens { id name } }");
    const dashboard = v.tokens.find((x) => x.name === "dashboard")!;
    expect(
      await gqlOk(t.url, admin, "mutation($id: ID!) { revokeToken(id: $id) }", { id: dashboard.id }),
    ).toEqual({ revokeToken: true });
    const denied = await gql(t.url, viewer, "{ me { name } }");
    expect(denied.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
  });
});
