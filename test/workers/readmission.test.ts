// Re-admission: a job admission sent to a cluster where it was expected to get room (within its
// queue's fair share) but never did — the room is split across nodes by pods that cannot be
// evicted — moves, once it has waited long enough, to another cluster where it fits now.
import { afterAll, beforeAll, expect, it } from "vitest";
import { until } from "../agent/until.js";
import { ControlPlane, TWO_NODES_OF_FOUR_GPUS, gpuJob } from "./harness.js";

const CLUSTER = TWO_NODES_OF_FOUR_GPUS;

let cp: ControlPlane;

beforeAll(async () => {
  cp = await ControlPlane.start();
  await cp.createQueue("team-a");
  await cp.createQueue("team-b");
  await cp.setQuota("team-a", "GPU", 4);
  // Non-preemptible jobs must fit their queue's quota in every resource they ask for.
  await cp.setQuota("team-a", "CPU", 4000);
  await cp.setQuota("team-a", "MEMORY", 4 * 2 ** 30);
  await cp.setQuota("team-b", "GPU", 4);
  await cp.addCluster("c1", CLUSTER);
  await cp.addCluster("c2", CLUSTER);
  await cp.admin(`mutation { cordonCluster(name: "c2", cordoned: true) { name } }`);
  await cp.startWorkers({ readmitAfterMs: 2000 });
}, 180_000); // the API, agents and workers start beside every other test file
afterAll(async () => cp?.close());

it("moves a job that waited unplaced to a cluster where it fits now", async () => {
  // team-a holds 2 GPUs on each of c1's nodes, within its quota and not preemptible (priority
  // >= 100): 4 GPUs are free, but no node has the 4 that team-b's pod needs.
  const holders: string[] = [];
  for (const node of ["gpu-0", "gpu-1"]) {
    const job = gpuJob(`holder-${node}`, "team-a", 1, 2);
    job.tasks[0] = {
      ...job.tasks[0]!,
      nodeSelector: [{ key: "kubernetes.io/hostname", values: [node] }],
    } as never;
    holders.push(await cp.submit({ ...job, cluster: "c1", priority: 100 }));
  }
  await until(async () => {
    for (const h of holders) expect((await cp.job(h)).state).toBe("RUNNING");
  });

  // team-b is within its share on c1 (c2 is cordoned): admission sends it there to wait.
  const waiting = await cp.submit(gpuJob("waiting", "team-b", 1, 4));
  await until(async () => expect((await cp.job(waiting)).cluster?.name).toBe("c1"));
  expect((await cp.events("job.assigned")).find((e) => e.job === waiting)?.message).toMatch(
    /reclaim makes room/,
  );

  // c2 opens; after the re-admission delay the job moves there and runs.
  await cp.admin(`mutation { cordonCluster(name: "c2", cordoned: false) { name } }`);
  const moved = await cp.jobInState(waiting, "RUNNING");
  expect(moved.cluster?.name).toBe("c2");
  const reassigned = (await cp.events("job.reassigned")).filter((e) => e.job === waiting);
  expect(reassigned).toHaveLength(1);
  expect(reassigned[0]!.message).toMatch(/moved from cluster c1 to c2/);
  for (const h of holders) expect((await cp.job(h)).state).toBe("RUNNING");
});
