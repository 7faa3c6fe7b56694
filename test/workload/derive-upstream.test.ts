// deriveWorkload on example manifests published by the projects that define each kind (the
// Kubernetes documentation's Jobs, JobSet's, the Kubeflow training operator's and the MPI
// operator's examples, copied into fixtures/): the tasks derived from each, with their pod counts
// and per-pod requests worked out by hand from the manifest, the gang minimum, the defaults
// written into the containers that ask for no cpu or memory, and the refusal of an example
// asking for accelerators fleetq does not count (TPUs).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { deriveWorkload, type Workload, WorkloadError } from "../../src/workload/index.js";

const FIXTURES = join(import.meta.dirname, "fixtures");
const DEFAULTS = { cpuMillis: 500, memory: 1024 ** 3 };

/** The one manifest in a fixture file. */
function load(file: string): unknown {
  const docs = parseAllDocuments(readFileSync(join(FIXTURES, file), "utf8"));
  expect(docs.flatMap((d) => d.errors)).toEqual([]);
  const values = docs.map((d) => d.toJS()).filter((v) => v !== null && v !== undefined);
  expect(values).toHaveLength(1);
  return values[0];
}

function derive(file: string): Workload {
  return deriveWorkload(load(file), DEFAULTS);
}

interface ExpectedTask {
  name: string;
  replicas: number;
  cpuMillis: number;
  memory: number;
  gpus: number;
}

interface Accepted {
  file: string;
  kind: Workload["kind"];
  name: string;
  tasks: ExpectedTask[];
  minMember: number;
  /** Every task's nodeSelector (none when absent). */
  nodeSelector?: { key: string; values: string[] }[];
  queue?: string;
}

const ACCEPTED: Accepted[] = [
  {
    // One container, no resources: the default request.
    file: "job-pi.yaml",
    kind: "Job",
    name: "pi",
    tasks: [{ name: "job", replicas: 1, cpuMillis: 500, memory: 1073741824, gpus: 0 }],
    minMember: 1,
  },
  {
    // Indexed, parallelism = completions = 10: all ten pods at once.
    file: "job-success-policy.yaml",
    kind: "Job",
    name: "job-success",
    tasks: [{ name: "job", replicas: 10, cpuMillis: 500, memory: 1073741824, gpus: 0 }],
    minMember: 10,
  },
  {
    // A work queue: parallelism 2, no completions.
    file: "job-work-queue.yaml",
    kind: "Job",
    name: "job-wq-2",
    tasks: [{ name: "job", replicas: 2, cpuMillis: 500, memory: 1073741824, gpus: 0 }],
    minMember: 2,
  },
  {
    // A sidecar init container (restartPolicy: Always) runs beside the main one: both defaults.
    file: "job-sidecar.yaml",
    kind: "Job",
    name: "myjob",
    tasks: [{ name: "job", replicas: 1, cpuMillis: 1000, memory: 2147483648, gpus: 0 }],
    minMember: 1,
  },
  {
    file: "jobset-paralleljobs.yaml",
    kind: "JobSet",
    name: "paralleljobs",
    tasks: [
      { name: "workers-0", replicas: 4, cpuMillis: 500, memory: 1073741824, gpus: 0 },
      { name: "driver-0", replicas: 1, cpuMillis: 500, memory: 1073741824, gpus: 0 },
    ],
    minMember: 5,
  },
  {
    // Five completions, three at a time: three pods in waves, each a separate piece of work (the
    // gang needs one); the init container and the container get the default request.
    file: "job-indexed.yaml",
    kind: "Job",
    name: "indexed-job",
    tasks: [{ name: "job", replicas: 3, cpuMillis: 500, memory: 1073741824, gpus: 0 }],
    minMember: 1,
  },
  {
    // nvidia.com/gpu: 1 in limits only; no cpu or memory: the defaults.
    file: "pytorchjob-mnist-nccl.yaml",
    kind: "PyTorchJob",
    name: "pytorch-dist-mnist-nccl",
    tasks: [
      { name: "master", replicas: 1, cpuMillis: 500, memory: 1073741824, gpus: 1 },
      { name: "worker", replicas: 1, cpuMillis: 500, memory: 1073741824, gpus: 1 },
    ],
    minMember: 2,
  },
  {
    // Elastic, workers only (2, at least 1): the gang is the one worker it starts with. cpu: 4
    // requested, memory the default.
    file: "pytorchjob-elastic-imagenet.yaml",
    kind: "PyTorchJob",
    name: "elastic-example-imagenet",
    tasks: [{ name: "worker", replicas: 2, cpuMillis: 4000, memory: 1073741824, gpus: 0 }],
    minMember: 1,
  },
  {
    // Limits only (cpu 1, memory 1Gi): the requests default to them.
    file: "mpijob-pi.yaml",
    kind: "MPIJob",
    name: "pi",
    tasks: [
      { name: "launcher", replicas: 1, cpuMillis: 1000, memory: 1073741824, gpus: 0 },
      { name: "worker", replicas: 2, cpuMillis: 1000, memory: 1073741824, gpus: 0 },
    ],
    minMember: 3,
  },
  {
    // The launcher asks for nothing; each worker for one GPU (limits), cpu and memory defaulted.
    file: "mpijob-tensorflow-benchmarks.yaml",
    kind: "MPIJob",
    name: "tensorflow-benchmarks",
    tasks: [
      { name: "launcher", replicas: 1, cpuMillis: 500, memory: 1073741824, gpus: 0 },
      { name: "worker", replicas: 2, cpuMillis: 500, memory: 1073741824, gpus: 1 },
    ],
    minMember: 3,
  },
];

describe("deriveWorkload on upstream example manifests", () => {
  it.each(ACCEPTED)("$file", (row) => {
    const workload = derive(row.file);
    expect(workload.kind).toBe(row.kind);
    expect(workload.name).toBe(row.name);
    expect(
      workload.tasks.map((t) => ({
        name: t.name,
        replicas: t.replicas,
        cpuMillis: t.resources.cpuMillis,
        memory: t.resources.memory,
        gpus: t.resources.gpus,
      })),
    ).toEqual(row.tasks);
    expect(workload.minMember).toBe(row.minMember);
    for (const task of workload.tasks) {
      expect(task.nodeSelector).toEqual(row.nodeSelector ?? []);
      expect(task.gpuModel).toBeNull();
    }
    expect(workload.queue).toBe(row.queue ?? null);
  });

  it("refuses the TPU JobSet example: fleetq does not count google.com/tpu", () => {
    let error: unknown;
    try {
      derive("jobset-tpu-v6e-multislice.yaml");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(WorkloadError);
    expect((error as WorkloadError).path).toEqual([
      "spec",
      "replicatedJobs",
      0,
      "template",
      "spec",
      "template",
      "spec",
      "containers",
      0,
      "resources",
      "limits",
      "google.com/tpu",
    ]);
    expect((error as WorkloadError).message).toContain("not a resource fleetq counts");
  });
});

describe("defaults written into the derived manifest", () => {
  const containerAt = (workload: Workload, task: string, list = "containers", i = 0) => {
    const template = workload.tasks.find((t) => t.name === task)!.template as {
      spec: Record<string, { resources?: unknown }[]>;
    };
    return template.spec[list]![i]!;
  };

  it("gives the pi Job's container, which asks for nothing, the default cpu and memory", () => {
    const workload = derive("job-pi.yaml");
    const spec = (workload.manifest as { spec: { template: { spec: { containers: unknown[] } } } }).spec
      .template.spec;
    expect(spec.containers).toHaveLength(1);
    expect(spec.containers[0]).toEqual({
      name: "pi",
      image: "perl",
      command: ["perl", "-Mbignum=bpi", "-wle", "print bpi(1000)"],
      resources: { requests: { cpu: "500m", memory: "1Gi" } },
    });
    expect(workload.tasks[0]!.template).toEqual(
      (workload.manifest as { spec: { template: unknown } }).spec.template,
    );
  });

  it("writes the defaults into a sidecar init container too", () => {
    const workload = derive("job-sidecar.yaml");
    expect(containerAt(workload, "job").resources).toEqual({
      requests: { cpu: "500m", memory: "1Gi" },
    });
    expect(containerAt(workload, "job", "initContainers")).toMatchObject({
      name: "logshipper",
      restartPolicy: "Always",
      resources: { requests: { cpu: "500m", memory: "1Gi" } },
    });
  });

  it("keeps GPU limits beside the defaulted requests, and leaves containers with limits as written", () => {
    const benchmarks = derive("mpijob-tensorflow-benchmarks.yaml");
    expect(containerAt(benchmarks, "worker").resources).toEqual({
      limits: { "nvidia.com/gpu": 1 },
      requests: { cpu: "500m", memory: "1Gi" },
    });
    expect(containerAt(benchmarks, "launcher").resources).toEqual({
      requests: { cpu: "500m", memory: "1Gi" },
    });
    const pi = derive("mpijob-pi.yaml");
    for (const task of ["launcher", "worker"])
      expect(containerAt(pi, task).resources).toEqual({ limits: { cpu: 1, memory: "1Gi" } });
  });

  it("writes only the missing memory next to a cpu request", () => {
    const workload = derive("pytorchjob-elastic-imagenet.yaml");
    expect(containerAt(workload, "worker").resources).toEqual({
      requests: { cpu: 4, memory: "1Gi" },
    });
  });
});
