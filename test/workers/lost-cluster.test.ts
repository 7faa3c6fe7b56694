// A cluster whose agent stops is LOST after the timeout (clusterLostAfterMs): the job admission
// had sent there without placing it runs on another cluster at once, new jobs go elsewhere, the
// job running there stays until the agent is back; then the cluster is READY again and its
// complete report settles what it lost.
import { afterAll, beforeAll, expect, it } from "vitest";
import { assignJobCluster } from "../../src/store/operations/jobs.js";
import { until } from "../agent/until.js";
import { ControlPlane, TWO_NODES_OF_FOUR_GPUS, gpuJob } from "./harness.js";

let cp: ControlPlane;
const state = async (name: string) =>
  (
    await cp.admin<{ cluster: { state: string } }>("query($n: String!) { cluster(name: $n) { state } }", {
      n: name,
    })
  ).cluster.state;

beforeAll(async () => {
  cp = await ControlPlane.start();
  cp.heartbeatSeconds = 0.2;
  await cp.createQueue("team-a");
  await cp.addCluster("c1", TWO_NODES_OF_FOUR_GPUS);
  await cp.addCluster("c2", TWO_NODES_OF_FOUR_GPUS);
  await cp.admin(`mutation { cordonCluster(name: "c2", cordoned: true) { name } }`);
  await cp.startWorkers({ clusterLostAfterMs: 8000, lostCheckIntervalMs: 300 });
}, 180_000);
afterAll(async () => cp?.close());

it("moves the unplaced job of a LOST cluster elsewhere, sends new jobs elsewhere, and takes the cluster back", async () => {
  // c1 is full; a second job of the same queue and priority waits there for room.
  const running = await cp.submit({ ...gpuJob("running", "team-a", 2, 4), cluster: "c1" });
  await until(async () => expect((await cp.job(running)).state).toBe("RUNNING"), 60_000);
  const waiting = await cp.submit(gpuJob("waiting", "team-a", 1, 4));
  await until(async () => expect((await cp.job(waiting)).pendingReason?.message).toBeTruthy(), 60_000);
  expect(await assignJobCluster(cp.api.server.store, { name: "test" }, { job: waiting, cluster: "c1" })).toBe(
    true,
  );
  await cp.admin(`mutation { cordonCluster(name: "c2", cordoned: false) { name } }`);
  expect(await cp.events("cluster.lost")).toEqual([]);

  await cp.stopAgent("c1");
  await until(async () => expect(await state("c1")).toBe("LOST"), 60_000);
  const moved = await cp.jobInState(waiting, "RUNNING");
  expect(moved.cluster?.name).toBe("c2");
  expect((await cp.events("cluster.lost")).map((e) => e.cluster)).toEqual(["c1"]);
  expect((await cp.events("job.readmitted")).map((e) => [e.job, e.message])).toEqual([
    [waiting, "job waiting: cluster c1 is LOST; back to admission"],
  ]);
  // The job with pods on c1 stays: they may still run.
  expect((await cp.job(running)).state).toBe("RUNNING");
  expect((await cp.job(running)).cluster?.name).toBe("c1");

  // A new job is not admitted to the LOST cluster.
  const fresh = await cp.submit(gpuJob("fresh", "team-a", 1, 4));
  const placed = await cp.jobInState(fresh, "RUNNING");
  expect(placed.cluster?.name).toBe("c2");

  // The agent comes back (its simulated cluster empty): READY after its complete report, and
  // the pods it no longer has are settled.
  await cp.restartCluster("c1", TWO_NODES_OF_FOUR_GPUS);
  await until(async () => expect(await state("c1")).toBe("READY"), 60_000);
  await until(async () => expect((await cp.job(running)).state).toBe("FAILED"), 60_000);
  expect((await cp.events("cluster.ready")).map((e) => e.cluster)).toEqual(["c1"]);
}, 240_000);
