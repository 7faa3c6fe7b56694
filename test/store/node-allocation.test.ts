// What pods hold per node, as the triggers keep it, against the sum over every pod, after each
// step of a job's life: placed, a bind failed, running, cancelled and evicted, finished.
import { prismaOf } from "../../src/store/testing.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { registerCluster } from "../../src/store/operations/clusters.js";
import { cancelJob } from "../../src/store/operations/jobs.js";
import { createQueue } from "../../src/store/operations/queues.js";
import { reportNodes } from "../../src/store/operations/report-nodes.js";
import { reportBindResult, reportPodStatus } from "../../src/store/operations/report-pods.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { addSums, allocatedByCluster, allocatedByNode, zeroSum } from "../../src/store/queries/allocation.js";
import { runCycle } from "../helpers/cycle.js";
import { openTestStore, type TestStore } from "../helpers/store.js";
import { admin, gpuNode, job, podsOf } from "./fixtures.js";

let t: TestStore;
const agent = { name: "agent:c1" };

beforeAll(async () => {
  t = await openTestStore();
  await createQueue(t.store, admin, { name: "team-a" });
  await registerCluster(t.store, admin, { name: "c1" });
  await reportNodes(t.store, agent, {
    cluster: "c1",
    complete: true,
    nodes: [gpuNode("n1", 8), gpuNode("n2", 8)],
  });
});
afterAll(async () => t?.close());

/** The definition: requests of the pods holding each node, summed over every pod. */
async function summedOverPods() {
  const rows = await prismaOf(t.db).$queryRaw<
    { node: string; cpu: bigint; memory: string; gpu: number; gpu_memory: bigint }[]
  >`
    SELECT p.node_name AS node, sum(p.cpu_millis)::bigint AS cpu, sum(p.memory)::text AS memory,
           sum(p.gpus + p.gpu_fraction)::float8 AS gpu, sum(p.gpu_memory)::bigint AS gpu_memory
    FROM pod p JOIN job j ON j.id = p.job_id
    WHERE p.state IN ('BINDING', 'RUNNING', 'RELEASING') AND p.node_name IS NOT NULL AND j.cluster_name = 'c1'
    GROUP BY 1`;
  return new Map(
    rows.map((r) => [
      r.node,
      { cpuMillis: Number(r.cpu), memory: BigInt(r.memory), gpu: r.gpu, gpuMemory: Number(r.gpu_memory) },
    ]),
  );
}

const kept = async () => (await allocatedByNode(prismaOf(t.db), ["c1"])).get("c1") ?? new Map();

it("follows every change of what pods hold, node by node", async () => {
  const tasks = [{ name: "w", replicas: 6, resources: { cpu: 1500, memory: "3Gi", gpu: 2 } }];
  const { job: a } = await submitJob(t.store, admin, job({ name: "a", cluster: "c1", tasks }));
  const { job: b } = await submitJob(t.store, admin, job({ name: "b", cluster: "c1" }));
  expect(await kept()).toEqual(new Map());

  const { bindRequests } = await runCycle(t.store, "c1");
  expect(bindRequests).toHaveLength(8);
  expect((await kept()).size).toBe(2);
  expect(await kept()).toEqual(await summedOverPods());
  expect((await allocatedByCluster(prismaOf(t.db), ["c1"])).get("c1")).toEqual(
    [...(await summedOverPods()).values()].reduce(addSums, zeroSum()),
  );

  const pods = [...(await podsOf(t, a.id)), ...(await podsOf(t, b.id))];
  await reportBindResult(t.store, agent, {
    cluster: "c1",
    results: bindRequests.map((r) => ({ bindRequest: r.id, ok: r.podId !== pods[0]!.id, message: "no" })),
  });
  await reportPodStatus(t.store, agent, {
    cluster: "c1",
    updates: pods
      .filter((p) => p.id !== pods[0]!.id)
      .map((p) => ({ job: p.jobId, pod: p.name, state: "RUNNING" as const })),
  });
  expect(await kept()).toEqual(await summedOverPods());

  const { bindRequests: evictions } = await cancelJob(t.store, admin, { id: a.id });
  expect(await kept()).toEqual(await summedOverPods());
  await reportBindResult(t.store, agent, {
    cluster: "c1",
    results: evictions.map((r) => ({ bindRequest: r.id, ok: true })),
  });
  const bPods = pods.filter((p) => p.jobId === b.id);
  await reportPodStatus(t.store, agent, {
    cluster: "c1",
    updates: bPods.map((p) => ({ job: b.id, pod: p.name, state: "SUCCEEDED" as const })),
  });
  expect(await summedOverPods()).toEqual(new Map());
  expect(await kept()).toEqual(new Map());
});
