// Run-time limits end to end: a job RUNNING past its maxRuntimeSeconds is stopped by the workers —
// its pods evicted through the outbox and the agent (gone from the simulated cluster), each pod
// and the job's event naming the limit, the job FAILED — while a job within its limit runs on.
import {
  bindRequestsOfJobs,
  MAX_BIND_REQUESTS_PAGE,
  MAX_PODS_PAGE,
  podsOfJobs,
} from "../../src/store/index.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { until } from "../agent/until.js";
import { ControlPlane, gpuJob, TWO_NODES_OF_FOUR_GPUS } from "./harness.js";

let cp: ControlPlane;
beforeAll(async () => {
  cp = await ControlPlane.start();
  await cp.createQueue("ci");
  await cp.addCluster("c1", TWO_NODES_OF_FOUR_GPUS);
  await cp.startWorkers({ runtimeLimitIntervalMs: 300 });
}, 180_000);
afterAll(async () => cp?.close());

const podsOnCluster = (job: string) =>
  cp.backends
    .get("c1")!
    .cluster.listPods()
    .filter((p) => p.jobId === job);

it("stops a job past its limit: pods evicted from the cluster, job FAILED naming the limit", async () => {
  const limited = await cp.submit(gpuJob("limited", "ci", 2, 1, { maxRuntimeSeconds: 2 }));
  const patient = await cp.submit(gpuJob("patient", "ci", 2, 1, { maxRuntimeSeconds: 3600 }));
  await cp.jobInState(patient, "RUNNING");

  const failed = await cp.jobInState(limited, "FAILED");
  // the evictions went to the agent, which took the pods off the cluster and said so
  await until(async () => {
    const pods = (await cp.job(limited)).pods;
    expect(pods.map((p) => p.state)).toEqual(["FAILED", "FAILED"]);
    expect(podsOnCluster(limited)).toEqual([]);
  }, 60_000);
  expect(failed.cluster?.name).toBe("c1");
  const store = cp.api.server.store;
  const pods = (await podsOfJobs(store, [limited], MAX_PODS_PAGE)).get(limited)!;
  expect(pods.map((x) => [x.state, x.nodeName, x.message])).toEqual([
    ["FAILED", null, "run-time limit exceeded (maxRuntimeSeconds 2)"],
    ["FAILED", null, "run-time limit exceeded (maxRuntimeSeconds 2)"],
  ]);
  // both pods had been bound on the cluster, and were evicted from it
  const requests = (await bindRequestsOfJobs(store, [limited], MAX_BIND_REQUESTS_PAGE)).get(limited)!;
  const binds = requests.filter((b) => b.kind === "BIND");
  expect(binds.map((b) => b.state)).toEqual(["SUCCEEDED", "SUCCEEDED"]);
  const evictions = requests.filter((b) => b.kind === "EVICT");
  expect(evictions.map((b) => [b.state, b.reason])).toEqual([
    ["SUCCEEDED", "run-time limit exceeded (maxRuntimeSeconds 2)"],
    ["SUCCEEDED", "run-time limit exceeded (maxRuntimeSeconds 2)"],
  ]);
  const events = (await cp.events("job.failed")).filter((e) => e.job === limited);
  expect(events).toHaveLength(1);
  expect(events[0]!.message).toMatch(
    /^job limited failed: run-time limit exceeded \(maxRuntimeSeconds 2\); started \d+s ago; evicting 2 pod\(s\)$/,
  );

  // the job within its limit runs on, its pods on the cluster
  expect((await cp.job(patient)).state).toBe("RUNNING");
  expect(podsOnCluster(patient)).toHaveLength(2);
}, 180_000);
