// What a pod may ask of a cluster, checked without I/O: the pod's request as Kubernetes computes
// it (sidecars included), extended resources and resource claims only where the task declares
// them and the cluster allows them, the queue's allow-lists of pod fields, fleetq's own label and
// annotation keys, and what the agent writes into the pods it creates.
import { describe, expect, it } from "vitest";
import { podManifest } from "../../src/agent/backends/kubernetes/pod-manifest.js";
import { resourceOverAsk } from "../../src/protocol/pod-resources.js";
import { effectivePolicy } from "../../src/store/domain/queue-policy.js";
import { jobPolicyError, storedJobPolicyError } from "../../src/store/validation/job-policy.js";
import { formatPath } from "../../src/store/validation/parse.js";
import type { ClusterPodPolicy } from "../../src/store/validation/pod-policy.js";
import { workloadObject } from "../../src/workload/index.js";
import { bindRequest, renderJobFor } from "../agent/bind-requests.js";

type Json = Record<string, unknown>;
const GiB = 2 ** 30;
const c = (name: string, requests?: Json, extra: Json = {}): Json => ({
  name,
  image: "x",
  ...(requests ? { resources: { requests } } : {}),
  ...extra,
});
const declared = { cpuMillis: 2000, memory: 4 * GiB, gpus: 1 };
const overPath = (spec: Json, d: Parameters<typeof resourceOverAsk>[1] = declared) => {
  const over = resourceOverAsk(spec, d);
  return over ? formatPath(over.path) : null;
};

describe("a pod's request as Kubernetes computes it", () => {
  it("a sidecar's GPU adds to the app containers' (more GPUs than declared is refused)", () => {
    const spec = {
      initContainers: [c("proxy", { "nvidia.com/gpu": 1 }, { restartPolicy: "Always" })],
      containers: [c("main", { "nvidia.com/gpu": 1 })],
    };
    expect(overPath(spec)).toBe('initContainers[0].resources.requests["nvidia.com/gpu"]');
  });

  it("a regular init container started after a sidecar adds to that sidecar", () => {
    const spec = {
      initContainers: [c("proxy", { cpu: "1" }, { restartPolicy: "Always" }), c("setup", { cpu: "1500m" })],
      containers: [c("main", { cpu: "500m" })],
    };
    expect(overPath(spec)).toBe("initContainers[1].resources.requests.cpu");
    // started before the sidecar, it runs alone: 1500m fits
    const before = {
      initContainers: [c("setup", { cpu: "1500m" }), c("proxy", { cpu: "1" }, { restartPolicy: "Always" })],
      containers: [c("main", { cpu: "1" })],
    };
    expect(overPath(before)).toBeNull();
  });

  it("a pod-level request (spec.resources) above the declared amount is refused", () => {
    const spec = { resources: { requests: { memory: "8Gi" } }, containers: [c("main")] };
    expect(overPath(spec)).toBe("resources.requests.memory");
  });

  it("an extended resource the task does not declare is refused; hugepages too", () => {
    expect(overPath({ containers: [c("main", { "amd.com/gpu": 1 })] })).toBe(
      'containers[0].resources.requests["amd.com/gpu"]',
    );
    expect(overPath({ containers: [c("main", { "nvidia.com/mig-1g.10gb": 1 })] })).toBe(
      'containers[0].resources.requests["nvidia.com/mig-1g.10gb"]',
    );
    expect(overPath({ containers: [c("main", { "hugepages-2Mi": "1Gi" })] })).toBe(
      'containers[0].resources.requests["hugepages-2Mi"]',
    );
    expect(overPath({ containers: [c("main", { "ephemeral-storage": "10Gi" })] })).toBeNull();
  });

  it("a declared extended resource may be asked for up to its declared count", () => {
    const d = { ...declared, extendedResources: { "amd.com/gpu": 2 } };
    expect(overPath({ containers: [c("main", { "amd.com/gpu": 2 })] }, d)).toBeNull();
    expect(overPath({ containers: [c("a", { "amd.com/gpu": 2 }), c("b", { "amd.com/gpu": 1 })] }, d)).toBe(
      'containers[1].resources.requests["amd.com/gpu"]',
    );
  });
});

const policy = (pod: Json = {}, over: Json = {}) =>
  effectivePolicy([
    {
      name: "team",
      parentName: null,
      namespaces: ["ml"],
      podSecurity: null,
      defaultRequest: null,
      podPolicy: pod,
      ...over,
    },
  ]);
const task = (template: unknown, extendedResources: Record<string, number> = {}) => ({
  template,
  cpuMillis: 1000,
  memory: BigInt(GiB),
  gpus: 0,
  extendedResources,
});
const job = (template: unknown, extendedResources?: Record<string, number>) => ({
  queue: "team",
  namespace: "ml",
  tasks: [task(template, extendedResources)],
});
const refusedAt = (e: Error | null) => (e ? (e as { field?: string }).field : null);
const pod = (spec: Json, metadata: Json = {}) => ({ metadata, spec: { containers: [c("main")], ...spec } });

describe("the queue's allow-lists of pod fields", () => {
  const cases: { name: string; template: unknown; allow: Json; field: string }[] = [
    {
      name: "service account",
      template: pod({ serviceAccountName: "cluster-admin" }),
      allow: { serviceAccounts: ["cluster-admin"] },
      field: "tasks[0].template.spec.serviceAccountName",
    },
    {
      name: "service account (deprecated alias)",
      template: pod({ serviceAccount: "cluster-admin" }),
      allow: { serviceAccounts: ["cluster-admin"] },
      field: "tasks[0].template.spec.serviceAccount",
    },
    {
      name: "runtime class",
      template: pod({ runtimeClassName: "nvidia-privileged" }),
      allow: { runtimeClasses: ["nvidia-privileged"] },
      field: "tasks[0].template.spec.runtimeClassName",
    },
    {
      name: "priority class",
      template: pod({ priorityClassName: "system-node-critical" }),
      allow: { priorityClasses: ["system-node-critical"] },
      field: "tasks[0].template.spec.priorityClassName",
    },
    {
      name: "an automounted service-account token",
      template: pod({ automountServiceAccountToken: true }),
      allow: { serviceAccountToken: true },
      field: "tasks[0].template.spec.automountServiceAccountToken",
    },
    {
      name: "a projected service-account token",
      template: pod({
        volumes: [{ name: "t", projected: { sources: [{ serviceAccountToken: { path: "token" } }] } }],
      }),
      allow: { serviceAccountToken: true },
      field: "tasks[0].template.spec.volumes[0].projected.sources[0].serviceAccountToken",
    },
  ];
  for (const k of cases) {
    it(`${k.name}: refused by default, allowed when the queue lists it`, () => {
      expect(refusedAt(jobPolicyError(job(k.template), policy()))).toBe(k.field);
      expect(jobPolicyError(job(k.template), policy(k.allow))).toBeNull();
    });
  }

  it("the default service account is allowed at the top; a queue listing others refuses it", () => {
    expect(jobPolicyError(job(pod({})), policy())).toBeNull();
    expect(jobPolicyError(job(pod({ serviceAccountName: "default" })), policy())).toBeNull();
    expect(refusedAt(jobPolicyError(job(pod({})), policy({ serviceAccounts: ["trainer"] })))).toBe(
      "tasks[0].template.spec.serviceAccountName",
    );
  });

  it("a child inherits each list its parent sets unless it sets its own", () => {
    const rows = [
      {
        name: "team",
        parentName: "org",
        namespaces: [],
        podSecurity: null,
        defaultRequest: null,
        podPolicy: { runtimeClasses: ["gvisor"] },
      },
      {
        name: "org",
        parentName: null,
        namespaces: ["ml"],
        podSecurity: null,
        defaultRequest: null,
        podPolicy: { runtimeClasses: ["kata"], priorityClasses: ["high"] },
      },
    ];
    const p = effectivePolicy(rows);
    expect(p.pod).toMatchObject({
      runtimeClasses: ["gvisor"],
      priorityClasses: ["high"],
      serviceAccounts: ["default"],
    });
  });

  it("labels and annotations under fleetq.io are refused (the agent writes them)", () => {
    for (const [field, key] of [
      ["labels", "fleetq.io/job-id"],
      ["annotations", "fleetq.io/gpu-devices"],
      ["annotations", "scheduling.fleetq.io/queue"],
    ] as const) {
      const e = jobPolicyError(job(pod({}, { [field]: { [key]: "x" } })), policy());
      expect(refusedAt(e)).toBe(`tasks[0].template.metadata.${field}["${key}"]`);
    }
    expect(
      jobPolicyError(job(pod({}, { labels: { "team.example.com/fleetq.io": "x" } })), policy()),
    ).toBeNull();
  });
});

describe("the cluster's pod policy", () => {
  const none: ClusterPodPolicy = { extendedResources: [], resourceClaims: false };
  const amd: ClusterPodPolicy = { extendedResources: ["amd.com/gpu"], resourceClaims: false };
  const claims: ClusterPodPolicy = { extendedResources: [], resourceClaims: true };

  it("a declared extended resource needs the cluster's leave", () => {
    const j = job(pod({}), { "amd.com/gpu": 2 });
    expect(refusedAt(jobPolicyError(j, policy(), none))).toBe('tasks[0].extendedResources["amd.com/gpu"]');
    expect(jobPolicyError(j, policy(), amd)).toBeNull();
    // no cluster chosen yet: admission decides
    expect(jobPolicyError(j, policy())).toBeNull();
  });

  it("resource claims (pod and container) need the cluster's leave", () => {
    const podClaims = pod({ resourceClaims: [{ name: "gpu", resourceClaimName: "a100" }] });
    const containerClaims = {
      spec: { containers: [c("main", undefined, { resources: { claims: [{ name: "gpu" }] } })] },
    };
    expect(refusedAt(jobPolicyError(job(podClaims), policy(), none))).toBe(
      "tasks[0].template.spec.resourceClaims",
    );
    expect(refusedAt(jobPolicyError(job(containerClaims), policy(), none))).toBe(
      "tasks[0].template.spec.containers[0].resources.claims",
    );
    expect(jobPolicyError(job(podClaims), policy(), claims)).toBeNull();
  });

  it("stored task rows are checked the same way", () => {
    const e = storedJobPolicyError(
      { queueName: "team", namespace: "ml" },
      [
        {
          template: pod({}),
          cpuMillis: 1000,
          memory: BigInt(GiB),
          gpus: 0,
          extendedResources: { "amd.com/gpu": 1 },
        },
      ],
      policy(),
      none,
    );
    expect(refusedAt(e)).toBe('tasks[0].extendedResources["amd.com/gpu"]');
  });
});

describe("the pods the agent creates", () => {
  const manifest = (
    template: unknown,
    shape: Partial<Parameters<typeof bindRequest>[0]> = {},
    extended?: Json,
  ) => {
    const request = bindRequest({
      id: "b",
      pod: "p-0",
      node: "n",
      gpus: 1,
      cpuMillis: 2000,
      memory: 4 * GiB,
      ...shape,
    });
    const job = renderJobFor(request, template);
    if (extended) Object.assign(job.tasks[0]!.resources, { extendedResources: extended });
    return podManifest({ ...request, gpuDevices: [3] }, job);
  };
  const env = (container: { env?: { name: string; value?: string }[] }) =>
    container.env?.find((e) => e.name === "NVIDIA_VISIBLE_DEVICES")?.value;

  it("a sidecar shares the declared amounts with the app containers: the pod asks for no more", () => {
    const pod = manifest({
      spec: {
        initContainers: [c("proxy", { "nvidia.com/gpu": 1, cpu: "1" }, { restartPolicy: "Always" })],
        containers: [c("main")],
      },
    });
    const gpus = [...pod.spec!.initContainers!, ...pod.spec!.containers].map((x) =>
      Number(x.resources?.limits?.["nvidia.com/gpu"] ?? 0),
    );
    expect(gpus.reduce((a, b) => a + b, 0)).toBe(1);
    const cpu = [...pod.spec!.initContainers!, ...pod.spec!.containers].map((x) =>
      Number.parseInt(String(x.resources?.requests?.cpu ?? "0"), 10),
    );
    expect(cpu.reduce((a, b) => a + b, 0)).toBe(2000);
  });

  it("containers asking for no GPU (init containers too) see none: NVIDIA_VISIBLE_DEVICES=void", () => {
    const pod = manifest({
      spec: {
        initContainers: [c("setup", undefined, { env: [{ name: "NVIDIA_VISIBLE_DEVICES", value: "all" }] })],
        containers: [
          c("main", { "nvidia.com/gpu": 1 }, { env: [{ name: "NVIDIA_VISIBLE_DEVICES", value: "all" }] }),
          c("logger", undefined, { env: [{ name: "NVIDIA_VISIBLE_DEVICES", value: "all" }] }),
        ],
      },
    });
    expect(env(pod.spec!.containers[0]!)).toBe("3");
    expect(env(pod.spec!.containers[1]!)).toBe("void");
    expect(env(pod.spec!.initContainers![0]!)).toBe("void");
  });

  it("when a sidecar takes the pod's GPU, the app containers asking for none still see none", () => {
    const pod = manifest({
      spec: {
        initContainers: [c("gpu-proxy", { "nvidia.com/gpu": 1 }, { restartPolicy: "Always" })],
        containers: [c("main", undefined, { env: [{ name: "NVIDIA_VISIBLE_DEVICES", value: "all" }] })],
      },
    });
    expect(env(pod.spec!.initContainers![0]!)).toBe("3");
    expect(env(pod.spec!.containers[0]!)).toBe("void");
  });

  it("a pod declaring no GPU has every container's NVIDIA_VISIBLE_DEVICES set to void", () => {
    const request = bindRequest({ id: "b", pod: "p-0", node: "n", gpus: 0, cpuMillis: 1000 });
    const pod = podManifest(
      request,
      renderJobFor(request, {
        spec: {
          containers: [c("main", undefined, { env: [{ name: "NVIDIA_VISIBLE_DEVICES", value: "all" }] })],
        },
      }),
    );
    expect(env(pod.spec!.containers[0]!)).toBe("void");
  });

  it("declared extended resources are written requests = limits; undeclared ones are taken off", () => {
    const pod = manifest(
      { spec: { containers: [c("main", { "amd.com/gpu": 8, "example.com/fpga": 1 })] } },
      { gpus: 0 },
      { "amd.com/gpu": 2 },
    );
    const r = pod.spec!.containers[0]!.resources!;
    expect(r.requests).toMatchObject({ "amd.com/gpu": "2" });
    expect(r.limits).toMatchObject({ "amd.com/gpu": "2" });
    expect(r.requests).not.toHaveProperty("example.com/fpga");
  });

  it("the service-account token is not mounted unless the template asks (and its queue allows)", () => {
    expect(manifest({ spec: { containers: [c("main")] } }).spec!.automountServiceAccountToken).toBe(false);
    expect(
      manifest({ spec: { automountServiceAccountToken: true, containers: [c("main")] } }).spec!
        .automountServiceAccountToken,
    ).toBe(true);
  });
});

describe("the workloads the agent creates", () => {
  it("their pod templates mount no service-account token unless they ask", () => {
    const manifest = (spec: Json) => ({
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name: "w" },
      spec: { template: { spec: { restartPolicy: "Never", containers: [c("main")], ...spec } } },
    });
    const job = { id: "00000000-0000-0000-0000-000000000001", name: "w", queue: "team", namespace: "ml" };
    const specOf = (o: Json) => ((o.spec as Json).template as { spec: Json }).spec;
    expect(
      specOf(workloadObject({ kind: "Job", manifest: manifest({}) }, job)).automountServiceAccountToken,
    ).toBe(false);
    const asked = workloadObject(
      { kind: "Job", manifest: manifest({ automountServiceAccountToken: true }) },
      job,
    );
    expect(specOf(asked).automountServiceAccountToken).toBe(true);
  });
});
