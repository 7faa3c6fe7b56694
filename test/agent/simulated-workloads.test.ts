// A simulated cluster plays the controllers of the workloads it runs: the object exists from its
// first bind; it succeeds once every pod of it has succeeded, fails with the first pod that
// fails; a Job in waves makes a succeeded pod's place again while completions remain; deleting
// the object takes its pods off their nodes.
import { beforeEach, expect, it } from "vitest";
import { parseClusterFile } from "../../src/agent/backends/simulated/cluster-file.js";
import { SimulatedBackend } from "../../src/agent/backends/simulated/simulated-backend.js";
import type { BackendEvents, PodStateChange, WorkloadStatusChange } from "../../src/agent/backends/types.js";
import type { RenderJob } from "../../src/render/index.js";
import { deriveWorkload } from "../../src/workload/index.js";
import { bindRequest } from "./bind-requests.js";

const CLUSTER = parseClusterFile(
  "c.yaml",
  "nodeGroups:\n  - { name: n, count: 2, cpu: 64, memory: 256Gi }\n",
);

let now = 0;
const clock = { now: () => now };
let states: PodStateChange[];
let ends: WorkloadStatusChange[];
let backend: SimulatedBackend;

const events = (): BackendEvents => ({
  nodes: () => {},
  podStates: (c) => states.push(...c),
  workloadStatus: (c) => ends.push(...c),
});

/** The job fleetq derives from a manifest, as the agent fetches it. */
function jobOf(id: string, manifest: Record<string, unknown>): RenderJob {
  const w = deriveWorkload(manifest, { cpuMillis: 500, memory: 2 ** 30 });
  return {
    id,
    name: w.name,
    namespace: "default",
    queue: "q",
    minMember: w.minMember,
    rendezvousPort: null,
    tasks: w.tasks.map((t) => ({
      name: t.name,
      replicas: t.replicas,
      resources: {
        cpuMillis: t.resources.cpuMillis,
        memory: t.resources.memory,
        gpus: 0,
        gpuFraction: 0,
        gpuMemory: 0,
      },
      template: t.template,
    })),
    workload: { kind: w.kind, apiVersion: w.apiVersion, name: w.name, manifest: w.manifest },
  };
}

const template = { spec: { containers: [{ name: "main", image: "busybox" }] } };
const indexedJob = (completions: number, parallelism: number) => ({
  apiVersion: "batch/v1",
  kind: "Job",
  metadata: { name: "shards" },
  spec: { completionMode: "Indexed", completions, parallelism, template },
});

async function bind(job: RenderJob, pod: string, id: string, opts: { exitFailure?: boolean } = {}) {
  const request = bindRequest({
    id,
    jobId: job.id,
    workload: job.workload!.kind,
    pod,
    task: pod.slice(0, pod.lastIndexOf("-")),
    node: "n-0",
    durationSeconds: 10,
    ...opts,
  });
  expect(await backend.bind(request, job)).toMatchObject({ ok: true });
}

beforeEach(async () => {
  now = 1_000;
  states = [];
  ends = [];
  backend = SimulatedBackend.fromClusterFile(CLUSTER, clock);
  await backend.start(events());
});

it("succeeds once every pod of the object has succeeded, with the kind's reason", async () => {
  const job = jobOf("j1", {
    apiVersion: "kubeflow.org/v1",
    kind: "PyTorchJob",
    metadata: { name: "ddp" },
    spec: { pytorchReplicaSpecs: { Master: { template }, Worker: { replicas: 2, template } } },
  });
  await bind(job, "master-0", "r1");
  await bind(job, "worker-0", "r2");
  now = 5_000;
  backend.tick();
  await bind(job, "worker-1", "r3");
  now = 11_000;
  backend.tick();
  expect(ends).toEqual([]); // worker-1 runs on
  now = 15_000;
  backend.tick();
  expect(ends).toEqual([
    {
      jobId: "j1",
      state: "SUCCEEDED",
      reason: "PyTorchJobSucceeded",
      message: "PyTorchJob ddp completed (simulated)",
    },
  ]);
});

it("fails with its first pod that fails", async () => {
  const job = jobOf("j2", indexedJob(2, 2));
  await bind(job, "job-0", "r1", { exitFailure: true });
  await bind(job, "job-1", "r2");
  now = 11_000;
  backend.tick();
  expect(ends).toEqual([
    {
      jobId: "j2",
      state: "FAILED",
      reason: "BackoffLimitExceeded",
      message: "pod job-0 of Job shards failed (simulated)",
    },
  ]);
});

it("makes a succeeded pod's place again while a Job in waves has completions left", async () => {
  const job = jobOf("j3", indexedJob(3, 2));
  await bind(job, "job-0", "r1");
  await bind(job, "job-1", "r2");
  now = 11_000;
  backend.tick();
  const again = states.filter((s) => s.recreated);
  expect(again).toEqual([
    {
      jobId: "j3",
      pod: "job-0",
      state: "PENDING",
      message: "made again by its controller: completion 3 of 3",
      recreated: true,
    },
  ]);
  expect(ends).toEqual([]);
  await bind(job, "job-0", "r3");
  now = 21_000;
  backend.tick();
  expect(ends.map((e) => e.state)).toEqual(["SUCCEEDED"]);
});

it("deleting the object takes its pods off their nodes", async () => {
  const job = jobOf("j4", indexedJob(2, 2));
  await bind(job, "job-0", "r1");
  await bind(job, "job-1", "r2");
  const request = bindRequest({
    id: "d1",
    kind: "delete",
    jobId: "j4",
    workload: "Job",
    pod: "job-0",
    node: "",
  });
  expect(await backend.deleteWorkload(request)).toEqual({ ok: true, message: "deleted" });
  expect(
    states
      .filter((s) => s.state === "PENDING")
      .map((s) => s.pod)
      .sort(),
  ).toEqual(["job-0", "job-1"]);
  expect(backend.cluster.nodeUsage("n-0")).toMatchObject({ pods: 0 });
  expect(await backend.deleteWorkload(request)).toEqual({ ok: true, message: "already gone" });
  now = 20_000;
  backend.tick();
  expect(ends).toEqual([]);
});
