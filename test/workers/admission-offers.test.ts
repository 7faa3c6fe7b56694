// A chunk of several jobs is first offered around (each job to its best-scoring cluster with room
// for it in sum, then one dry run per cluster with what it was offered): a job is sent as fitting
// now only where that dry run placed it, and a job refused there is offered elsewhere before the
// jobs after it are decided — the same decisions as dry runs of every job on every cluster.
import { afterEach, expect, it } from "vitest";
import { registerCluster } from "../../src/store/operations/clusters.js";
import { createQueue } from "../../src/store/operations/queues.js";
import { reportNodes } from "../../src/store/operations/report-nodes.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { admissionPass } from "./admission-pass.js";
import { runCycle } from "../helpers/cycle.js";
import { openTestStore, type TestStore } from "../helpers/store.js";
import { admin, gpuNode, job } from "../store/fixtures.js";

let t: TestStore;
afterEach(async () => t?.close());

const gpus = (name: string, replicas: number, gpu: number) =>
  job({ name, tasks: [{ name: "w", replicas, resources: { cpu: 1000, memory: "1Gi", gpu } }] });

async function cluster(name: string, nodeGpus: number[]): Promise<void> {
  await registerCluster(t.store, admin, { name });
  await reportNodes(
    t.store,
    { name: `agent:${name}` },
    { cluster: name, complete: true, nodes: nodeGpus.map((g, i) => gpuNode(`${name}-n${i}`, g)) },
  );
}

it("offers a job refused where its room is only in sum elsewhere before deciding the jobs after it", async () => {
  t = await openTestStore();
  for (const q of ["team-a", "team-b"]) await createQueue(t.store, admin, { name: q });
  // alpha: 2 GPUs free on each of 4 nodes; beta: 4 free on its one node, and a lower score for
  // the 4-GPU gang than alpha.
  await cluster("alpha", [8, 8, 8, 8]);
  await cluster("beta", [8]);
  const held = (cluster: string, replicas: number, gpu: number) =>
    submitJob(t.store, admin, { ...gpus(`held-${cluster}`, replicas, gpu), queue: "team-b", cluster });
  await held("alpha", 4, 6);
  await held("beta", 1, 4);
  for (const c of ["alpha", "beta"])
    expect((await runCycle(t.store, c)).bindRequests.length).toBeGreaterThan(0);

  const big = (await submitJob(t.store, admin, gpus("big", 1, 4))).job.id;
  const small = (await submitJob(t.store, admin, gpus("small", 1, 1))).job.id;
  const r = await admissionPass(t.store);
  // Offered first to alpha, the gang is refused there (no node has 4 GPUs free); the small job,
  // offered to beta while the gang counted on alpha, would have taken the room the gang needs.
  expect(r.assigned.map((d) => [d.job, d.cluster, d.tier])).toEqual([
    [big, "beta", 2],
    [small, "alpha", 2],
  ]);
});

it("places a backlog spread over the clusters, each job where a dry run placed it", async () => {
  t = await openTestStore();
  for (const q of ["team-a", "team-b"]) await createQueue(t.store, admin, { name: q });
  await cluster("alpha", [8, 8]);
  await cluster("beta", [8]);
  await cluster("gamma", [4, 4]);
  const ids: string[] = [];
  for (let i = 0; i < 12; i++)
    ids.push(
      (
        await submitJob(
          t.store,
          admin,
          job({
            name: `g${i}`,
            queue: i % 2 ? "team-b" : "team-a",
            tasks: [{ name: "w", replicas: 1, resources: { cpu: 1000, memory: "1Gi", gpu: i % 3 ? 2 : 8 } }],
          }),
        )
      ).job.id,
    );
  const r = await admissionPass(t.store);
  const now = r.assigned.filter((d) => d.tier === 2);
  // What was sent as fitting now fits the nodes: no 8-GPU gang on gamma, at most 16, 8, 8 GPUs.
  const used = new Map<string, number>();
  for (const d of now) {
    const g = ids.indexOf(d.job) % 3 ? 2 : 8;
    if (g === 8) expect(d.cluster).not.toBe("gamma");
    used.set(d.cluster, (used.get(d.cluster) ?? 0) + g);
  }
  expect(used.get("alpha") ?? 0).toBeLessThanOrEqual(16);
  expect(used.get("beta") ?? 0).toBeLessThanOrEqual(8);
  expect(used.get("gamma") ?? 0).toBeLessThanOrEqual(8);
  // 4 gangs of 8 and 8 of 2 GPUs (48) on 32 GPUs: the room is used up to a gang of 2.
  expect([...used.values()].reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(30);
  expect(new Set(now.map((d) => d.cluster))).toEqual(new Set(["alpha", "beta", "gamma"]));
});
