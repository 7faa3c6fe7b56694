// Pod reports carry a state, not a node: a late report of a run the books have already moved
// past must not put a pod back on a node. A pod the books hold on no node (PENDING, or
// PIPELINED: only nominated) reported RUNNING stays where the books have it; a RELEASING pod
// reported RUNNING is still being evicted and keeps holding its node as RELEASING.
import { sql } from "../helpers/db.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { SessionResult } from "../../src/core/index.js";
import { commitSession } from "../../src/store/operations/commit-session.js";
import { cancelJob } from "../../src/store/operations/jobs.js";
import { reportBindResult, reportPodStatus } from "../../src/store/operations/report-pods.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { loadSnapshot } from "../../src/store/snapshot/load-snapshot.js";
import { runCycle } from "../helpers/cycle.js";
import type { TestStore } from "../helpers/store.js";
import {
  addGpuCluster,
  podsOf as podsOfJob,
  admin,
  agentOfC1,
  bindRequestsOf,
  job,
  storeWithC1,
} from "./fixtures.js";

let t: TestStore;

beforeAll(async () => {
  t = await storeWithC1();
});
afterAll(async () => t?.close());

const podsOf = (id: string) => podsOfJob(t, id);

/** What the books hold on n1 of `cluster`: GPUs of pods BINDING, RUNNING or RELEASING there. */
async function gpusHeldOn(cluster: string): Promise<number> {
  const [row] = await sql<{ gpus: number }>(
    t.testDb.url,
    `SELECT coalesce(sum(p.gpus), 0)::int AS gpus FROM pod p JOIN job j ON j.id = p.job_id
     WHERE p.node_name = 'n1' AND p.state IN ('BINDING', 'RUNNING', 'RELEASING') AND j.cluster_name = $1`,
    [cluster],
  );
  return row!.gpus;
}

it("late RUNNING reports put neither a releasing pod nor one pipelined onto its node back in the running", async () => {
  const eight = (name: string) =>
    job({
      name,
      cluster: "c1",
      tasks: [{ name: "w", replicas: 1, resources: { cpu: 1000, memory: "1Gi", gpu: 8 } }],
    });
  const { job: old } = await submitJob(t.store, admin, eight("old"));
  await runCycle(t.store, "c1");
  await reportPodStatus(t.store, agentOfC1, {
    cluster: "c1",
    updates: [{ job: old.id, pod: "w-0", state: "RUNNING" }],
  });
  await cancelJob(t.store, admin, { id: old.id });
  expect((await podsOf(old.id)).map((p) => [p.state, p.nodeName])).toEqual([["RELEASING", "n1"]]);

  // The next job waits for n1 to be freed: pipelined onto it.
  const { job: next } = await submitJob(t.store, admin, eight("next"));
  await runCycle(t.store, "c1");
  expect((await podsOf(next.id)).map((p) => [p.state, p.nodeName])).toEqual([["PIPELINED", "n1"]]);

  // Reports of runs the books have moved past arrive late (an agent's report retried after a
  // replica died, or sent before an eviction): the old pod runs until evicted, the new one does not.
  await reportPodStatus(t.store, agentOfC1, {
    cluster: "c1",
    updates: [
      { job: old.id, pod: "w-0", state: "RUNNING" },
      { job: next.id, pod: "w-0", state: "RUNNING" },
    ],
  });
  expect((await podsOf(old.id)).map((p) => [p.state, p.nodeName])).toEqual([["RELEASING", "n1"]]);
  expect((await podsOf(next.id)).map((p) => [p.state, p.nodeName])).toEqual([["PIPELINED", "n1"]]);
  expect(await gpusHeldOn("c1")).toBe(8);
});

it("a late report that a pod left its node does not take it off the node it is being bound to anew", async () => {
  await addGpuCluster(t.store, "c2");
  const agent = { name: "agent:c2" };
  const { job: j } = await submitJob(
    t.store,
    admin,
    job({
      name: "moved",
      cluster: "c2",
      tasks: [{ name: "w", replicas: 1, resources: { cpu: 1000, memory: "1Gi", gpu: 1 } }],
    }),
  );
  await runCycle(t.store, "c2");
  await reportPodStatus(t.store, agent, {
    cluster: "c2",
    updates: [{ job: j.id, pod: "w-0", state: "RUNNING" }],
  });
  // Evicted, it waits again and the next cycle binds it anew.
  const left = { job: j.id, pod: "w-0", state: "PENDING" as const, message: "evicted from n1" };
  await reportPodStatus(t.store, agent, { cluster: "c2", updates: [left] });
  await runCycle(t.store, "c2");
  expect((await podsOf(j.id)).map((p) => [p.state, p.nodeName])).toEqual([["BINDING", "n1"]]);

  // The report of that eviction comes again (the agent's report lane retried it, or it came after
  // the eviction's result) while the new bind is on its way: it is about the run before, and the
  // pod stays bound — taken off its node, it would be bound a second time.
  await reportPodStatus(t.store, agent, { cluster: "c2", updates: [left] });
  expect((await podsOf(j.id)).map((p) => [p.state, p.nodeName])).toEqual([["BINDING", "n1"]]);
  await runCycle(t.store, "c2");
  const binds = (await bindRequestsOf(t, j.id)).filter((r) => r.kind === "BIND").length;
  expect(binds).toBe(2);
});

/** A cycle that evicts one running pod from n1 and does nothing else. */
async function evictCycle(cluster: string, jobId: string, podId: string): Promise<void> {
  const { generation, rows } = await loadSnapshot(t.store, cluster);
  const result: SessionResult = {
    binds: [],
    pipelines: [],
    evictions: [{ job: jobId, pod: podId, node: "n1", action: "reclaim", message: "reclaimed" }],
    pods: [{ job: jobId, pod: podId, status: "Releasing", node: "n1", gpuGroups: [] }],
    jobs: [],
    queues: [],
    searchCursors: [],
  };
  await commitSession(t.store, cluster, generation, result, rows);
}

/** A one-pod, one-GPU job on a new cluster of one node (n1), and what a test of it needs. */
async function oneGpuJobOn(cluster: string, name: string) {
  await addGpuCluster(t.store, cluster);
  const { job: j } = await submitJob(
    t.store,
    admin,
    job({
      name,
      cluster,
      tasks: [{ name: "w", replicas: 1, resources: { cpu: 1000, memory: "1Gi", gpu: 1 } }],
    }),
  );
  const [pod] = await podsOf(j.id);
  return {
    j,
    pod: pod!,
    agent: { name: `agent:${cluster}` },
    runningOn: { job: j.id, pod: "w-0", state: "RUNNING" as const },
  };
}

/** The pod's newest request of a kind. */
const lastRequest = (podId: string, kind: "BIND" | "EVICT") =>
  sql<{ id: string; state: string; nodeName: string }>(
    t.testDb.url,
    'SELECT id::text, state::text, node_name AS "nodeName" FROM bind_request WHERE pod_id = $1 AND kind = $2 ORDER BY created_at DESC, id DESC LIMIT 1',
    [podId, kind],
  ).then(([r]) => r!);

it("a late report that a pod left its node, naming the bind of the run before, does not take it off the node it runs on again", async () => {
  const cluster = "c3";
  const { j, pod, agent, runningOn } = await oneGpuJobOn(cluster, "back-again");

  // Bound (BIND 1) and running on n1.
  await runCycle(t.store, cluster);
  const first = await lastRequest(pod.id, "BIND");
  await reportBindResult(t.store, agent, { cluster, results: [{ bindRequest: first.id, ok: true }] });
  await reportPodStatus(t.store, agent, { cluster, updates: [runningOn] });

  // Evicted: the eviction's result comes first; the agent's report that the pod left n1 is late.
  await evictCycle(cluster, j.id, pod.id);
  const evict = await lastRequest(pod.id, "EVICT");
  await reportBindResult(t.store, agent, { cluster, results: [{ bindRequest: evict.id, ok: true }] });
  expect((await podsOf(j.id)).map((p) => [p.state, p.nodeName])).toEqual([["PENDING", null]]);

  // Bound anew on the same node (BIND 2), carried out and reported running.
  await runCycle(t.store, cluster);
  const second = await lastRequest(pod.id, "BIND");
  expect(second.id).not.toBe(first.id);
  expect(second.nodeName).toBe("n1");
  await reportBindResult(t.store, agent, { cluster, results: [{ bindRequest: second.id, ok: true }] });
  await reportPodStatus(t.store, agent, { cluster, updates: [runningOn] });
  expect((await podsOf(j.id)).map((p) => [p.state, p.nodeName])).toEqual([["RUNNING", "n1"]]);

  // The late report names the run it ends (BIND 1): the pod runs on n1 again, the books keep it there.
  const changed = await reportPodStatus(t.store, agent, {
    cluster,
    updates: [{ job: j.id, pod: "w-0", state: "PENDING", message: "evicted from n1", bindRequest: first.id }],
  });
  expect(changed).toBe(0);
  expect((await podsOf(j.id)).map((p) => [p.state, p.nodeName])).toEqual([["RUNNING", "n1"]]);

  // A report that the current run (BIND 2) ended still takes the pod off its node.
  const left = await reportPodStatus(t.store, agent, {
    cluster,
    updates: [
      {
        job: j.id,
        pod: "w-0",
        state: "PENDING",
        message: "the pod was deleted from n1",
        bindRequest: second.id,
      },
    ],
  });
  expect(left).toBe(1);
  expect((await podsOf(j.id)).map((p) => [p.state, p.nodeName])).toEqual([["PENDING", null]]);
});

it("a late eviction result of the run before does not confirm the eviction of the pod's run now", async () => {
  const cluster = "c4";
  const { j, pod, agent, runningOn } = await oneGpuJobOn(cluster, "evicted-twice");
  await runCycle(t.store, cluster);
  const first = await lastRequest(pod.id, "BIND");
  await reportPodStatus(t.store, agent, { cluster, updates: [runningOn] });

  // Evicted (EVICT 1): the agent's report that the pod left n1 comes; the eviction's result is
  // held up (the agent cut off from the API, its results sent later).
  await evictCycle(cluster, j.id, pod.id);
  const firstEvict = await lastRequest(pod.id, "EVICT");
  await reportPodStatus(t.store, agent, {
    cluster,
    updates: [{ job: j.id, pod: "w-0", state: "PENDING", message: "evicted from n1", bindRequest: first.id }],
  });
  // Bound anew on n1, running, and evicted again (EVICT 2, not carried out yet).
  await runCycle(t.store, cluster);
  await reportPodStatus(t.store, agent, { cluster, updates: [runningOn] });
  await evictCycle(cluster, j.id, pod.id);
  const secondEvict = await lastRequest(pod.id, "EVICT");
  expect(secondEvict.id).not.toBe(firstEvict.id);
  expect((await podsOf(j.id)).map((p) => [p.state, p.nodeName])).toEqual([["RELEASING", "n1"]]);

  // EVICT 1's result arrives: it closes EVICT 1 and says nothing of the run now, which holds n1
  // until EVICT 2 is carried out.
  const closed = await reportBindResult(t.store, agent, {
    cluster,
    results: [{ bindRequest: firstEvict.id, ok: true }],
  });
  expect(closed).toBe(1);
  expect((await podsOf(j.id)).map((p) => [p.state, p.nodeName])).toEqual([["RELEASING", "n1"]]);
  expect(await gpusHeldOn(cluster)).toBe(1);

  // EVICT 2's result frees it.
  await reportBindResult(t.store, agent, { cluster, results: [{ bindRequest: secondEvict.id, ok: true }] });
  expect((await podsOf(j.id)).map((p) => [p.state, p.nodeName])).toEqual([["PENDING", null]]);
});
