// The snapshot loader and the committer against real PostgreSQL, with the real scheduling core
// in between: rows → Snapshot → runSession → commitSession → rows and BindRequests; and the
// fence: a result computed on a snapshot older than the cluster's generation is refused whole.
import { storeOver } from "../../src/store/testing.js";
import { PrismaPg } from "@prisma/adapter-pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SessionResult, runSession } from "../../src/core/index.js";
import { StaleSnapshotError } from "../../src/store/errors.js";
import { PrismaClient } from "../../src/store/generated/prisma/client.js";
import { registerCluster, cordonCluster } from "../../src/store/operations/clusters.js";
import { commitSession } from "../../src/store/operations/commit-session.js";
import { cancelJob } from "../../src/store/operations/jobs.js";
import { createQueue, setQueueQuota } from "../../src/store/operations/queues.js";
import { reportNodes } from "../../src/store/operations/report-nodes.js";
import { reportBindResult, reportPodStatus } from "../../src/store/operations/report-pods.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { loadSnapshot } from "../../src/store/snapshot/load-snapshot.js";
import {
  bindRequestsOfCluster,
  eventsOfJobs,
  MAX_BIND_REQUESTS_PAGE,
  MAX_EVENTS_PAGE,
} from "../../src/store/index.js";
import { countRows, sql, tableRows } from "../helpers/db.js";
import { openTestStore, type TestStore } from "../helpers/store.js";
import { admin, clusterOf, gpuNode, job, jobOf, podsOf } from "./fixtures.js";

const agent = { name: "agent:c1" };

let t: TestStore;

beforeAll(async () => {
  t = await openTestStore();
  await createQueue(t.store, admin, { name: "org" });
  await createQueue(t.store, admin, { name: "team-a", parent: "org" });
  await createQueue(t.store, admin, { name: "team-b", parent: "org", priority: 90 });
  await setQueueQuota(t.store, admin, {
    queue: "team-a",
    resource: "GPU",
    deserved: 4,
    limit: 12,
    overQuotaWeight: 2,
  });
  await registerCluster(t.store, admin, { name: "c1" });
  await registerCluster(t.store, admin, { name: "c2" });
  await setQueueQuota(t.store, admin, { queue: "team-a", cluster: "c1", resource: "GPU", deserved: 6 });
  await reportNodes(t.store, agent, {
    cluster: "c1",
    complete: true,
    nodes: [
      gpuNode("n1", 8, [{ key: "rack", value: "r1" }]),
      { ...gpuNode("n2", 8, [{ key: "rack", value: "r2" }]), taints: ["dedicated=ml:PreferNoSchedule"] },
    ],
  });
});
afterAll(async () => t?.close());

const clusterGeneration = async (name = "c1") => Number((await clusterOf(t, name)).generation);
/** A pod's row by id. */
const podById = async (id: string) =>
  (
    await sql<{ state: string; nodeName: string | null; message: string | null }>(
      t.testDb.url,
      `SELECT state::text, node_name AS "nodeName", message FROM pod WHERE id = $1`,
      [id],
    )
  )[0]!;
const firstPodOf = async (jobId: string) => (await podsOf(t, jobId))[0]!;

describe("loadSnapshot", () => {
  it("maps nodes, the queue tree with effective quotas for the cluster, and the cluster's jobs", async () => {
    const { job: a } = await submitJob(
      t.store,
      admin,
      job({ name: "a", cluster: "c1", topology: { required: "rack" } }),
    );
    await submitJob(t.store, admin, job({ name: "elsewhere", cluster: "c2" }));
    await submitJob(t.store, admin, job({ name: "unassigned" }));
    const { snapshot, generation, rows } = await loadSnapshot(t.store, "c1", { now: 1_000 });
    expect(generation).toBe(await clusterGeneration());
    // The rows it was built from: the cluster's job and all its pods, nothing else.
    expect([...rows.jobs.values()]).toEqual([
      expect.objectContaining({
        id: a.id,
        name: "a",
        queueName: "team-a",
        clusterName: "c1",
        state: "PENDING",
        minMember: 2,
      }),
    ]);
    expect([...rows.pods.values()].map((p) => [p.jobId, p.name, p.state, p.nodeName]).sort()).toEqual([
      [a.id, "worker-0", "PENDING", null],
      [a.id, "worker-1", "PENDING", null],
    ]);
    expect(snapshot.now).toBe(1_000);
    expect(snapshot.nodes.map((n) => n.name)).toEqual(["n1", "n2"]);
    expect(snapshot.nodes[1]).toMatchObject({
      labels: { rack: "r2" },
      taints: [{ key: "dedicated", value: "ml", effect: "PreferNoSchedule" }],
      unschedulable: false,
      ready: true,
      allocatable: { cpuMillis: 64_000, memory: 512 * 2 ** 30, gpus: 8, pods: 110, extended: {} },
      gpuMemory: 81_920,
      gpuModel: "A100",
    });
    const teamA = snapshot.queues.find((q) => q.name === "team-a")!;
    expect(teamA).toMatchObject({
      parent: "org",
      priority: 100,
      deserved: { gpu: 6, cpuMillis: 0, memory: 0 },
      limit: { gpu: 12, cpuMillis: -1, memory: -1 },
      overQuotaWeight: { gpu: 2, cpuMillis: 1, memory: 1 },
    });
    expect(snapshot.queues.find((q) => q.name === "team-b")!.priority).toBe(90);
    expect(snapshot.jobs.map((j) => j.name)).toEqual(["a"]);
    const spec = snapshot.jobs[0]!;
    expect(spec).toMatchObject({
      uid: a.id,
      queue: "team-a",
      priority: 50,
      preemptible: true,
      minMember: 2,
      lastStartAt: null,
    });
    expect(spec.topology).toEqual({ topology: "levels:rack", required: "rack", preferred: null });
    expect(snapshot.topologies).toEqual([{ name: "levels:rack", levels: ["rack"] }]);
    expect(spec.pods.map((p) => [p.name, p.status, p.node, p.request.gpus, p.request.memory])).toEqual([
      ["worker-0", "Pending", null, 1, 2 ** 30],
      ["worker-1", "Pending", null, 1, 2 ** 30],
    ]);
  });

  it("reads in a fixed number of queries whatever the number of jobs (no N+1)", async () => {
    const queries: string[] = [];
    const prisma = new PrismaClient({
      adapter: new PrismaPg({ connectionString: t.testDb.url }),
      log: [{ emit: "event", level: "query" }],
    });
    prisma.$on("query", (e) => queries.push(e.query));
    try {
      const store = storeOver(prisma);
      await loadSnapshot(store, "c1");
      const few = queries.length;
      for (let i = 0; i < 15; i++) await submitJob(t.store, admin, job({ name: `many-${i}`, cluster: "c1" }));
      queries.length = 0;
      const { snapshot } = await loadSnapshot(store, "c1");
      expect(snapshot.jobs.length).toBeGreaterThan(15);
      expect(queries.length).toBe(few);
      expect(
        queries.filter((q) => !/^(BEGIN|COMMIT|SET TRANSACTION)/i.test(q.trim())).length,
      ).toBeLessThanOrEqual(7);
    } finally {
      await prisma.$disconnect();
    }
  });
});

describe("commitSession", () => {
  it("commits a real session: pods BINDING on their nodes, BIND requests, the job ADMITTED, generation bumped", async () => {
    await sql(t.testDb.url, "UPDATE job SET state = 'CANCELLED' WHERE cluster_name = 'c1'"); // a clean slate
    const { job: j } = await submitJob(
      t.store,
      admin,
      job({
        name: "gang",
        cluster: "c1",
        tasks: [{ name: "w", replicas: 3, resources: { gpu: 4, cpu: 1000 } }],
      }),
    );
    const { snapshot, generation, rows } = await loadSnapshot(t.store, "c1");
    const result = runSession(snapshot);
    expect(result.binds.filter((b) => b.job === j.id)).toHaveLength(3);
    const committed = await commitSession(t.store, "c1", generation, result, rows);
    expect(committed.generation).toBe(generation + 1);
    expect(await clusterGeneration()).toBe(generation + 1);

    const pods = await podsOf(t, j.id);
    expect(pods.every((p) => p.state === "BINDING" && (p.nodeName === "n1" || p.nodeName === "n2"))).toBe(
      true,
    );
    const requests = committed.bindRequests.filter((b) => b.jobId === j.id);
    expect(requests.map((b) => [b.kind, b.state, Number(b.generation)])).toEqual(
      Array(3).fill(["BIND", "PENDING", generation + 1]),
    );
    expect(requests.map((b) => b.nodeName).sort()).toEqual(pods.map((p) => p.nodeName).sort());
    // What the commit hands the dispatcher is the rows as stored, field by field, in id order.
    const stored = (await bindRequestsOfCluster(t.store, "c1", null, MAX_BIND_REQUESTS_PAGE)).filter(
      (b) => Number(b.generation) === generation + 1,
    );
    // (all but the attempt the database fills in, and the pod's name the API reads with them)
    expect(committed.bindRequests).toEqual(
      stored.sort((a, b) => (a.id < b.id ? -1 : 1)).map(({ restarts: _r, pod: _p, ...row }) => row),
    );
    const after = await jobOf(t, j.id);
    expect(after.state).toBe("ADMITTED");
    expect(after.pendingReason).toBeNull();
    expect(after.lastStartAt).not.toBeNull();
    expect(committed.jobs).toContainEqual(
      expect.objectContaining({ id: j.id, from: "PENDING", to: "ADMITTED" }),
    );
    const events = (await eventsOfJobs(t.store, [j.id], MAX_EVENTS_PAGE)).get(j.id)!;
    expect(events.map((e) => e.kind)).toEqual(["job.submitted", "pods.bound", "job.admitted"]);
    expect(events[1]!.actor).toBe("scheduler");

    // The agent's side: binds succeed, pods run → RUNNING; pods finish → SUCCEEDED.
    expect(
      await reportBindResult(t.store, agent, {
        cluster: "c1",
        results: requests.map((b) => ({ bindRequest: b.id, ok: true })),
      }),
    ).toBe(3);
    expect(
      await reportBindResult(t.store, agent, {
        cluster: "c1",
        results: requests.map((b) => ({ bindRequest: b.id, ok: true })),
      }),
    ).toBe(0);
    await reportPodStatus(t.store, agent, {
      cluster: "c1",
      updates: pods.map((p) => ({ job: j.id, pod: p.name, state: "RUNNING" as const })),
    });
    expect((await jobOf(t, j.id)).state).toBe("RUNNING");
    await reportPodStatus(t.store, agent, {
      cluster: "c1",
      updates: pods.map((p) => ({ job: j.id, pod: p.name, state: "SUCCEEDED" as const })),
    });
    const done = await jobOf(t, j.id);
    expect(done.state).toBe("SUCCEEDED");
    expect(done.finishedAt).not.toBeNull();
  });

  it("records why a job stays pending, from the session's fit errors", async () => {
    const { job: big } = await submitJob(
      t.store,
      admin,
      job({ name: "too-big", cluster: "c1", tasks: [{ name: "w", replicas: 1, resources: { gpu: 16 } }] }),
    );
    const { snapshot, generation, rows } = await loadSnapshot(t.store, "c1");
    const result = runSession(snapshot);
    const outcome = result.jobs.find((o) => o.uid === big.id)!;
    expect(outcome.fitErrors.length).toBeGreaterThan(0);
    await commitSession(t.store, "c1", generation, result, rows);
    const row = await jobOf(t, big.id);
    expect(row.state).toBe("PENDING");
    expect(row.pendingReason).toEqual({
      message: `c1: ${outcome.fitErrors.join("; ")}`,
      clusters: [{ cluster: "c1", message: outcome.fitErrors.join("; "), short: [] }],
    });
    // Unchanged reason in the next cycle: no new event.
    const pendingEvents = () =>
      countRows(t.testDb.url, "event", "job_id = $1 AND kind = 'job.pending'", [big.id]);
    const events = await pendingEvents();
    const again = await loadSnapshot(t.store, "c1");
    await commitSession(t.store, "c1", again.generation, runSession(again.snapshot), again.rows);
    expect(await pendingEvents()).toBe(events);
    await cancelJob(t.store, admin, { id: big.id });
  });

  it("applies evictions and pipelines: RELEASING with an EVICT request, PIPELINED with its node", async () => {
    const { job: victim } = await submitJob(
      t.store,
      admin,
      job({ name: "victim", cluster: "c1", tasks: [{ name: "w", replicas: 1, resources: { gpu: 8 } }] }),
    );
    const { job: waiter } = await submitJob(
      t.store,
      admin,
      job({ name: "waiter", cluster: "c1", tasks: [{ name: "w", replicas: 1, resources: { gpu: 8 } }] }),
    );
    const vPod = await firstPodOf(victim.id);
    const wPod = await firstPodOf(waiter.id);
    await sql(t.testDb.url, "UPDATE pod SET state = 'RUNNING', node_name = 'n1' WHERE id = $1", [vPod.id]);
    const { generation, rows } = await loadSnapshot(t.store, "c1");
    // A hand-written result in the core's contract: reclaim evicts the victim, pipelines the waiter.
    const result: SessionResult = {
      binds: [],
      pipelines: [{ job: waiter.id, pod: wPod.id, node: "n1", gpuGroups: [], action: "reclaim" }],
      evictions: [
        { job: victim.id, pod: vPod.id, node: "n1", action: "reclaim", message: "reclaimed for team-b" },
      ],
      pods: [
        { job: victim.id, pod: vPod.id, status: "Releasing", node: "n1", gpuGroups: [] },
        { job: waiter.id, pod: wPod.id, status: "Pipelined", node: "n1", gpuGroups: [] },
      ],
      jobs: [],
      queues: [],
      searchCursors: [],
    };
    const committed = await commitSession(t.store, "c1", generation, result, rows);
    expect(committed.bindRequests.map((b) => [b.kind, b.podId, b.nodeName, b.reason])).toEqual([
      ["EVICT", vPod.id, "n1", "reclaimed for team-b"],
    ]);
    expect(await podById(vPod.id)).toMatchObject({
      state: "RELEASING",
      nodeName: "n1",
      message: "reclaimed for team-b",
    });
    expect(await podById(wPod.id)).toMatchObject({
      state: "PIPELINED",
      nodeName: "n1",
    });

    // Loaded again, the pipelined pod is Pending (the nomination is session-only) …
    const next = await loadSnapshot(t.store, "c1");
    const loaded = next.snapshot.jobs.find((x) => x.uid === waiter.id)!.pods[0]!;
    expect([loaded.status, loaded.node]).toEqual(["Pending", null]);
    // … and a session that does not pipeline it again returns it to PENDING.
    await commitSession(
      t.store,
      "c1",
      next.generation,
      { binds: [], pipelines: [], evictions: [], pods: [], jobs: [], queues: [], searchCursors: [] },
      next.rows,
    );
    expect(await podById(wPod.id)).toMatchObject({
      state: "PENDING",
      nodeName: null,
    });

    // The eviction completes: the victim's pod is free and waits again.
    await reportBindResult(t.store, agent, {
      cluster: "c1",
      results: [{ bindRequest: committed.bindRequests[0]!.id, ok: true }],
    });
    expect(await podById(vPod.id)).toMatchObject({
      state: "PENDING",
      nodeName: null,
    });
  });

  it("sends neither request for a pod the session placed and took back from the same node", async () => {
    // Allocate places a pod, a later action of the same session evicts it again (seen with
    // consolidation): the agent could carry the two out in either order, so neither goes out.
    const one = { tasks: [{ name: "w", replicas: 1, resources: { gpu: 1 } }] };
    const { job: moved } = await submitJob(t.store, admin, job({ name: "moved", cluster: "c1", ...one }));
    const { job: dropped } = await submitJob(t.store, admin, job({ name: "dropped", cluster: "c1", ...one }));
    const { job: kept } = await submitJob(t.store, admin, job({ name: "kept", cluster: "c1", ...one }));
    const [m, d, k] = await Promise.all([moved, dropped, kept].map((j) => firstPodOf(j.id)));
    const { generation, rows } = await loadSnapshot(t.store, "c1");
    const bind = (jobId: string, pod: string) => ({
      job: jobId,
      pod,
      node: "n1",
      gpuGroups: [],
      gpuDevices: [],
      action: "allocate" as const,
    });
    const evict = (jobId: string, pod: string) => ({
      job: jobId,
      pod,
      node: "n1",
      action: "consolidation" as const,
      message: "moved to consolidate resources",
    });
    const committed = await commitSession(
      t.store,
      "c1",
      generation,
      {
        binds: [bind(moved.id, m!.id), bind(dropped.id, d!.id), bind(kept.id, k!.id)],
        pipelines: [{ job: moved.id, pod: m!.id, node: "n2", gpuGroups: [], action: "consolidation" }],
        evictions: [evict(moved.id, m!.id), evict(dropped.id, d!.id)],
        pods: [
          { job: moved.id, pod: m!.id, status: "Pipelined", node: "n2", gpuGroups: [] },
          { job: dropped.id, pod: d!.id, status: "Releasing", node: "n1", gpuGroups: [] },
          { job: kept.id, pod: k!.id, status: "Binding", node: "n1", gpuGroups: [] },
        ],
        jobs: [],
        queues: [],
        searchCursors: [],
      },
      rows,
    );
    expect(committed.bindRequests.map((b) => [b.kind, b.podId])).toEqual([["BIND", k!.id]]);
    const state = async (id: string) => {
      const p = await podById(id);
      return [p.state, p.nodeName];
    };
    expect(await state(m!.id)).toEqual(["PIPELINED", "n2"]);
    expect(await state(d!.id)).toEqual(["PENDING", null]);
    expect(await state(k!.id)).toEqual(["BINDING", "n1"]);
    for (const j of [moved, dropped, kept]) await cancelJob(t.store, admin, { id: j.id });
  });

  it("refuses a result from a stale snapshot and changes nothing", async () => {
    const { job: j } = await submitJob(
      t.store,
      admin,
      job({ name: "late", cluster: "c1", tasks: [{ name: "w", replicas: 1, resources: { gpu: 1 } }] }),
    );
    const { snapshot, generation, rows } = await loadSnapshot(t.store, "c1");
    const result = runSession(snapshot);
    expect(result.binds.some((b) => b.job === j.id)).toBe(true);
    // Meanwhile the agent reports a node change: the generation moves.
    await reportNodes(t.store, agent, { cluster: "c1", complete: false, nodes: [gpuNode("n3", 4)] });
    const tables = async () => ({
      pods: await tableRows(t.testDb.url, "pod"),
      jobs: await tableRows(t.testDb.url, "job"),
      requests: await countRows(t.testDb.url, "bind_request"),
      events: await countRows(t.testDb.url, "event"),
      generation: await clusterGeneration(),
    });
    const before = await tables();
    const err = await commitSession(t.store, "c1", generation, result, rows).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StaleSnapshotError);
    expect(err).toMatchObject({
      cluster: "c1",
      seenGeneration: generation,
      currentGeneration: generation + 1,
    });
    expect(await tables()).toEqual(before);
  });

  it("an unchanged node report does not move the generation; a cordon does, and empties the cluster for the session", async () => {
    await reportNodes(t.store, agent, { cluster: "c1", complete: false, nodes: [gpuNode("n4", 4)] });
    const g = await clusterGeneration();
    const again = await reportNodes(t.store, agent, {
      cluster: "c1",
      complete: false,
      nodes: [gpuNode("n4", 4)],
    });
    expect(again).toBe(0);
    expect(await clusterGeneration()).toBe(g);
    await cordonCluster(t.store, admin, { name: "c1", cordoned: true });
    expect(await clusterGeneration()).toBe(g + 1);
    const { snapshot } = await loadSnapshot(t.store, "c1");
    expect(snapshot.nodes.every((n) => n.unschedulable)).toBe(true);
    await cordonCluster(t.store, admin, { name: "c1", cordoned: false });
  });
});
