// A simulated cluster kept in a state file outlives its agent, as a real cluster does: a backend
// started again on the file runs the same pods on the same nodes for what is left of their time,
// and every pod started is in the bind log once.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { parseClusterFile } from "../../src/agent/backends/simulated/cluster-file.js";
import { SimulatedBackend } from "../../src/agent/backends/simulated/simulated-backend.js";
import { bindLogOf, readClusterState } from "../../src/agent/backends/simulated/state-file.js";
import type { BackendEvents, PodStateChange } from "../../src/agent/backends/types.js";
import { bindRequest } from "./bind-requests.js";

const CLUSTER = parseClusterFile(
  "c.yaml",
  "nodeGroups:\n  - { name: n, count: 2, cpu: 8, memory: 64Gi, gpus: 8, gpuModel: A100, gpuMemoryMiB: 81920 }\n",
);

let dir: string;
let stateFile: string;
let now = 0;
const clock = { now: () => now };

function events(changes: PodStateChange[]): BackendEvents {
  return { nodes: () => {}, podStates: (c) => changes.push(...c) };
}

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "fleetq-sim-state-"));
  stateFile = path.join(dir, "c.state.json");
  now = 1_000;
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it("keeps running pods across a restart of its agent, each for the rest of its time", async () => {
  const first = SimulatedBackend.fromClusterFile(CLUSTER, clock, stateFile);
  await first.start(events([]));
  await first.bind(bindRequest({ id: "r1", pod: "p0", node: "n-0", gpus: 4, durationSeconds: 10 }));
  await first.bind(bindRequest({ id: "r2", pod: "p1", node: "n-1", gpus: 2, durationSeconds: 30 }));
  await first.bind(bindRequest({ id: "r1", pod: "p0", node: "n-0", gpus: 4, durationSeconds: 10 })); // a repeat
  expect(readClusterState(stateFile).pods.map((p) => p.request.pod.name)).toEqual(["p0", "p1"]);
  await first.stop(); // the agent goes away; the cluster does not

  now = 20_000;
  const changes: PodStateChange[] = [];
  const second = SimulatedBackend.fromClusterFile(CLUSTER, clock, stateFile);
  await second.start(events(changes));
  // p0's time ended while the agent was away; p1 runs on where it was
  expect(changes).toEqual([
    { jobId: "job-1", pod: "p0", state: "SUCCEEDED", exitCode: 0, bindRequest: "r1" },
  ]);
  expect(second.cluster.podNode("job-1", "p1")).toBe("n-1");
  expect(second.cluster.nodeUsage("n-1")).toMatchObject({ gpus: 6, pods: 1 });
  expect(readClusterState(stateFile).pods.map((p) => p.request.pod.name)).toEqual(["p1"]);

  now = 31_000;
  second.tick();
  expect(changes.at(-1)).toEqual({
    jobId: "job-1",
    pod: "p1",
    state: "SUCCEEDED",
    exitCode: 0,
    bindRequest: "r2",
  });
  expect(readClusterState(stateFile).pods).toEqual([]);
  const starts = readFileSync(bindLogOf(stateFile), "utf8").trim().split("\n");
  expect(starts.map((l) => JSON.parse(l).pod)).toEqual(["p0", "p1"]);
});

it("starts empty when its state file is gone (a cluster restarted empty)", async () => {
  const backend = SimulatedBackend.fromClusterFile(CLUSTER, clock, stateFile);
  await backend.start(events([]));
  expect(backend.cluster.runningPodCount).toBe(0);
  expect(readClusterState(stateFile).pods).toEqual([]);
});

it("does not run a bind again that it carried out before its agent restarted, once its pod has ended", async () => {
  const first = SimulatedBackend.fromClusterFile(CLUSTER, clock, stateFile);
  await first.start(events([]));
  const request = bindRequest({ id: "r1", pod: "p0", node: "n-0", gpus: 4, durationSeconds: 10 });
  await first.bind(request);
  await first.stop(); // killed before its outcome was recorded: the request comes again

  now = 20_000;
  const changes: PodStateChange[] = [];
  const second = SimulatedBackend.fromClusterFile(CLUSTER, clock, stateFile);
  await second.start(events(changes));
  expect(changes).toEqual([
    { jobId: "job-1", pod: "p0", state: "SUCCEEDED", exitCode: 0, bindRequest: "r1" },
  ]);
  // as a real cluster keeps a finished pod's object: the repeat finds it, nothing starts
  expect(await second.bind(request)).toMatchObject({ ok: true });
  expect(second.cluster.runningPodCount).toBe(0);
  expect(readFileSync(bindLogOf(stateFile), "utf8").trim().split("\n")).toHaveLength(1);
  // a newer bind of the same pod runs it again
  await second.bind(bindRequest({ id: "r2", pod: "p0", node: "n-0", gpus: 4, durationSeconds: 10 }));
  expect(second.cluster.podNode("job-1", "p0")).toBe("n-0");
});

it("keeps the newest bind of a run across a restart: an eviction decided before it leaves the run alone", async () => {
  const first = SimulatedBackend.fromClusterFile(CLUSTER, clock, stateFile);
  await first.start(events([]));
  const bind = (id: string, generation: number) =>
    bindRequest({ id, pod: "p0", node: "n-0", gpus: 4, durationSeconds: 60, generation });
  await first.bind(bind("r1", 3));
  await first.bind(bind("r5", 9)); // bound again where it runs: the run is r5's now
  await first.stop();

  const changes: PodStateChange[] = [];
  const second = SimulatedBackend.fromClusterFile(CLUSTER, clock, stateFile);
  await second.start(events(changes));
  const evict = (id: string, generation: number) =>
    second.evict(bindRequest({ id, kind: "evict", pod: "p0", node: "n-0", generation }));
  expect(await evict("r4", 7)).toMatchObject({ ok: true, message: expect.stringMatching(/^superseded/) });
  expect(second.cluster.podNode("job-1", "p0")).toBe("n-0");
  expect(await evict("r6", 10)).toEqual({ ok: true, message: "evicted from n-0" });
  expect(changes).toMatchObject([{ pod: "p0", state: "PENDING", bindRequest: "r5" }]);
});

it("forgets the binds it carried out when its state file is gone (a cluster restarted empty)", async () => {
  const first = SimulatedBackend.fromClusterFile(CLUSTER, clock, stateFile);
  await first.start(events([]));
  const request = bindRequest({ id: "r1", pod: "p0", node: "n-0", gpus: 4, durationSeconds: 10 });
  await first.bind(request);
  await first.stop();
  rmSync(stateFile);

  const second = SimulatedBackend.fromClusterFile(CLUSTER, clock, stateFile);
  await second.start(events([]));
  await second.bind(request);
  expect(second.cluster.podNode("job-1", "p0")).toBe("n-0");
});
