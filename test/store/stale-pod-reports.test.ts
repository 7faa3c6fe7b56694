// Pod reports carry a state, not a node: a late report of a run the books have already moved
// past must not put a pod back on a node. A pod the books hold on no node (PENDING, or
// PIPELINED: only nominated) reported RUNNING stays where the books have it; a RELEASING pod
// reported RUNNING is still being evicted and keeps holding its node as RELEASING.
import { afterAll, beforeAll, expect, it } from "vitest";
import { cancelJob } from "../../src/store/operations/jobs.js";
import { reportPodStatus } from "../../src/store/operations/report-pods.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { runCycle } from "../helpers/cycle.js";
import type { TestStore } from "../helpers/store.js";
import { addGpuCluster, admin, agentOfC1, job, storeWithC1 } from "./fixtures.js";

let t: TestStore;

beforeAll(async () => {
  t = await storeWithC1();
});
afterAll(async () => t?.close());

const podsOf = (id: string) => t.db.prisma.pod.findMany({ where: { jobId: id }, orderBy: { name: "asc" } });

/** What the books hold on n1: GPUs of pods BINDING, RUNNING or RELEASING there. */
async function gpusHeldOnN1(): Promise<number> {
  const pods = await t.db.prisma.pod.findMany({
    where: { nodeName: "n1", state: { in: ["BINDING", "RUNNING", "RELEASING"] } },
  });
  return pods.reduce((sum, p) => sum + p.gpus, 0);
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
  expect(await gpusHeldOnN1()).toBe(8);
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
  const binds = await t.db.prisma.bindRequest.count({ where: { jobId: j.id, kind: "BIND" } });
  expect(binds).toBe(2);
});
