// A simulated cluster restarted empty (what restarting `npm start` does to its clusters), end
// to end through the API, the workers and the agent: the control plane no longer believes the
// old pods run; their jobs end FAILED ("pod vanished"), and the GPUs they held go to the jobs
// waiting behind them.
import { afterAll, beforeAll, expect, it } from "vitest";
import { until } from "../agent/until.js";
import { ControlPlane, TWO_NODES_OF_FOUR_GPUS, gpuJob } from "./harness.js";

let cp: ControlPlane;

beforeAll(async () => {
  cp = await ControlPlane.start();
  await cp.createQueue("team-a");
  await cp.addCluster("c1", TWO_NODES_OF_FOUR_GPUS);
  await cp.startWorkers();
}, 180_000);
afterAll(async () => cp?.close());

it("fails the pods a restarted empty simulated cluster lost, and runs the waiting job on their GPUs", async () => {
  const running = await cp.submit({ ...gpuJob("long", "team-a", 2, 4), cluster: "c1" });
  await until(async () => expect((await cp.job(running)).state).toBe("RUNNING"), 60_000);
  const waiting = await cp.submit({ ...gpuJob("waiting", "team-a", 2, 4), cluster: "c1" });
  await until(async () => expect((await cp.job(waiting)).cluster?.name).toBe("c1"), 60_000);
  expect((await cp.job(waiting)).state).toBe("PENDING");

  await cp.restartCluster("c1", TWO_NODES_OF_FOUR_GPUS);

  await until(async () => {
    const lost = await cp.job(running);
    expect(lost.state).toBe("FAILED");
    expect(lost.pods.map((p) => p.state)).toEqual(["FAILED", "FAILED"]);
  }, 60_000);
  const vanished = (await cp.events("pods.vanished")).filter((e) => e.job === running);
  expect(vanished.map((e) => e.message)).toEqual([
    "job long: w-0, w-1 FAILED (pod vanished from cluster c1)",
  ]);
  await until(async () => expect((await cp.job(waiting)).state).toBe("RUNNING"), 60_000);
  expect(cp.backends.get("c1")!.cluster.runningPodCount).toBe(2);
});
