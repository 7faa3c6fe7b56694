// The workers' estimates task keeps Job.estimatedStart current on its own: a submission triggers a
// run (the timer is far off here), and the waiting job's estimate is the running job's declared end.
import { jobById } from "../../src/store/index.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { until } from "../agent/until.js";
import { ControlPlane, gpuJob, TWO_NODES_OF_FOUR_GPUS } from "./harness.js";

let cp: ControlPlane;
beforeAll(async () => {
  cp = await ControlPlane.start();
  await cp.createQueue("ci");
  await cp.addCluster("c1", TWO_NODES_OF_FOUR_GPUS);
  await cp.startWorkers({ estimateIntervalMs: 3_600_000, estimateMinGapMs: 0 });
}, 180_000);
afterAll(async () => cp?.close());

it("a submission triggers new estimates: the waiting job starts when the running one is expected to end", async () => {
  const running = await cp.submit(
    gpuJob("running", "ci", 2, 4, { cluster: "c1", expectedRuntimeSeconds: 1800 }),
  );
  await cp.jobInState(running, "RUNNING");
  const waiting = await cp.submit(
    gpuJob("waiting", "ci", 1, 4, { cluster: "c1", expectedRuntimeSeconds: 600 }),
  );
  const q = "query($id: ID!) { job(id: $id) { state estimatedStart estimatedCluster } }";
  const e = await until(async () => {
    const { job } = await cp.admin<{
      job: { state: string; estimatedStart: string | null; estimatedCluster: string | null };
    }>(q, { id: waiting });
    expect(job.estimatedStart).not.toBeNull();
    return job;
  }, 60_000);
  const last = (await jobById(cp.api.server.store, running))!;
  expect(e).toEqual({
    state: "PENDING",
    estimatedStart: new Date(last.lastStartAt!.getTime() + 1_800_000).toISOString(),
    estimatedCluster: "c1",
  });
}, 180_000);
