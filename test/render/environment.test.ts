// Rendering a job into Kubernetes objects: the rendezvous environment of each pod, where a pod
// stands in its job, the names of its objects, and the pods and headless Service built from them.
import { describe, expect, it } from "vitest";
import type { V1Pod, V1Service } from "@kubernetes/client-node";
import {
  DEFAULT_RENDEZVOUS_PORT,
  type EnvVar,
  hasService,
  jobServiceName,
  MAX_LISTED_PEERS,
  peerAddress,
  type PodPlace,
  podPlace,
  podPlaces,
  type RenderJob,
  type RenderTask,
  renderJob,
  renderPod,
  renderService,
  rendezvousEnvironment,
  templateOverrides,
  uniquePodName,
  worldSize,
} from "../../src/render/index.js";

const JOB_ID = "01a242e8-856f-7db7-a84d-87e75b35d763";
const OTHER_JOB_ID = "01a242e9-1c20-7aa0-9f31-4b0c6de2a911";

const DNS_1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS_1123 = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const defaultTemplate = () => ({
  metadata: { labels: { app: "trainer" }, annotations: { team: "ml" } },
  spec: { containers: [{ name: "main", image: "trainer:1" }] },
});

function task(name: string, replicas: number, over: Partial<RenderTask> = {}): RenderTask {
  return {
    name,
    replicas,
    resources: { cpuMillis: 2000, memory: 4 * 2 ** 30, gpus: 0, gpuFraction: 0, gpuMemory: 0 },
    template: defaultTemplate(),
    ...over,
  };
}

function job(tasks: RenderTask[], over: Partial<RenderJob> = {}): RenderJob {
  const pods = tasks.reduce((n, t) => n + t.replicas, 0);
  return {
    id: JOB_ID,
    name: "train",
    namespace: "research",
    queue: "gpu-a",
    minMember: pods,
    rendezvousPort: null,
    tasks,
    ...over,
  };
}

/** master (1 replica), then worker (3 replicas), in that order. */
const masterWorkers = (over: Partial<RenderJob> = {}) => job([task("master", 1), task("worker", 3)], over);

function place(j: RenderJob, pod: string): PodPlace {
  const p = podPlace(j, pod);
  if (!p) throw new Error(`no pod ${pod}`);
  return p;
}

/** The environment as a map, after checking that no variable appears twice. */
function envMap(env: readonly EnvVar[]): Record<string, string> {
  const names = env.map((e) => e.name);
  expect(new Set(names).size).toBe(names.length);
  return Object.fromEntries(env.map((e) => [e.name, e.value]));
}

const envOf = (j: RenderJob, pod: string, restarts = 0) =>
  envMap(rendezvousEnvironment(j, place(j, pod), restarts));

type Container = { name: string; env?: { name: string; value?: string }[] };
const containersOf = (pod: V1Pod): Container[] => (pod.spec?.containers ?? []) as Container[];
const initContainersOf = (pod: V1Pod): Container[] => (pod.spec?.initContainers ?? []) as Container[];

describe("rendezvousEnvironment: a master+workers job", () => {
  const j = masterWorkers();
  const service = jobServiceName(j.id, j.name);
  const peers = ["master-0", "worker-0", "worker-1", "worker-2"].map((p) => `${p}.${service}`);

  it.each([
    { pod: "master-0", task: "master", rank: 0, index: 0 },
    { pod: "worker-0", task: "worker", rank: 1, index: 0 },
    { pod: "worker-1", task: "worker", rank: 2, index: 1 },
    { pod: "worker-2", task: "worker", rank: 3, index: 2 },
  ])("$pod has rank $rank and index $index", ({ pod, task: taskName, rank, index }) => {
    const env = envOf(j, pod);
    expect(env).toMatchObject({
      FLEETQ_JOB_ID: JOB_ID,
      FLEETQ_JOB_NAME: "train",
      FLEETQ_TASK: taskName,
      FLEETQ_TASK_INDEX: String(index),
      FLEETQ_RANK: String(rank),
      FLEETQ_WORLD_SIZE: "4",
      FLEETQ_RESTART_ATTEMPT: "0",
      FLEETQ_TASKS: "master:1,worker:3",
      FLEETQ_SUBDOMAIN: service,
      FLEETQ_PEERS: peers.join(","),
      MASTER_ADDR: `master-0.${service}`,
      MASTER_PORT: "29500",
      WORLD_SIZE: "4",
      RANK: String(rank),
      PET_NNODES: "4",
      PET_NODE_RANK: String(rank),
      PET_NPROC_PER_NODE: "1",
      PET_MASTER_ADDR: `master-0.${service}`,
      PET_MASTER_PORT: "29500",
      JOB_COMPLETION_INDEX: String(index),
    });
    // The pod's own entry in the peer list is the one at its rank.
    expect(env.FLEETQ_PEERS!.split(",")[rank]).toBe(`${pod}.${service}`);
  });

  it("lists the peers in rank order, each as peerAddress gives it", () => {
    expect(podPlaces(j).map((p) => peerAddress(j, p.task, p.index))).toEqual(peers);
    expect(worldSize(j)).toBe(4);
    expect(hasService(j)).toBe(true);
  });

  it.each([
    { rendezvousPort: null, port: String(DEFAULT_RENDEZVOUS_PORT) },
    { rendezvousPort: 23456, port: "23456" },
  ])("MASTER_PORT is $port when rendezvousPort is $rendezvousPort", ({ rendezvousPort, port }) => {
    expect(DEFAULT_RENDEZVOUS_PORT).toBe(29500);
    const env = envOf(masterWorkers({ rendezvousPort }), "worker-1");
    expect(env.MASTER_PORT).toBe(port);
    expect(env.PET_MASTER_PORT).toBe(port);
  });

  it("gives every pod the same variables in the same order", () => {
    const orders = podPlaces(j).map((p) => rendezvousEnvironment(j, p, 0).map((e) => e.name));
    for (const order of orders) expect(order).toEqual(orders[0]);
  });
});

describe("rendezvousEnvironment: a one-pod job", () => {
  const j = job([task("main", 1)]);

  it("has no Service: the master and the only peer are the bare hostname", () => {
    expect(hasService(j)).toBe(false);
    const env = envOf(j, "main-0");
    expect(env).toMatchObject({
      MASTER_ADDR: "main-0",
      PET_MASTER_ADDR: "main-0",
      FLEETQ_PEERS: "main-0",
      FLEETQ_SUBDOMAIN: "",
      FLEETQ_TASKS: "main:1",
      WORLD_SIZE: "1",
      RANK: "0",
      PET_NNODES: "1",
      JOB_COMPLETION_INDEX: "0",
    });
    expect(peerAddress(j, j.tasks[0]!, 0)).toBe("main-0");
  });
});

describe("rendezvousEnvironment: elastic jobs", () => {
  const service = jobServiceName(JOB_ID, "train");

  it.each([
    { minMember: 2, port: null, nnodes: "2:4", endpoint: `master-0.${service}:29500` },
    { minMember: 1, port: 40000, nnodes: "1:4", endpoint: `master-0.${service}:40000` },
    { minMember: 3, port: null, nnodes: "3:4", endpoint: `master-0.${service}:29500` },
  ])("minMember $minMember of 4 pods: PET_NNODES $nnodes and a c10d rendezvous", (c) => {
    const j = masterWorkers({ minMember: c.minMember, rendezvousPort: c.port });
    for (const p of podPlaces(j)) {
      const env = envMap(rendezvousEnvironment(j, p, 0));
      expect(env.PET_NNODES).toBe(c.nnodes);
      expect(env.PET_RDZV_BACKEND).toBe("c10d");
      expect(env.PET_RDZV_ENDPOINT).toBe(c.endpoint);
      expect(env.PET_RDZV_ID).toBe(JOB_ID);
      expect(env.WORLD_SIZE).toBe("4");
    }
  });

  it.each([
    { what: "a gang of all 4 pods", j: masterWorkers({ minMember: 4 }) },
    { what: "a one-pod job", j: job([task("main", 1)]) },
  ])("$what is not elastic and has no PET_RDZV_* variables", ({ j }) => {
    for (const p of podPlaces(j)) {
      const env = envMap(rendezvousEnvironment(j, p, 0));
      expect(env.PET_NNODES).toBe(String(worldSize(j)));
      for (const name of ["PET_RDZV_BACKEND", "PET_RDZV_ENDPOINT", "PET_RDZV_ID"])
        expect(env).not.toHaveProperty(name);
    }
  });
});

describe("rendezvousEnvironment: restarts and processes per pod", () => {
  it.each([0, 1, 2, 7])("FLEETQ_RESTART_ATTEMPT is %i after that many restarts", (restarts) => {
    const j = masterWorkers();
    expect(envOf(j, "worker-2", restarts).FLEETQ_RESTART_ATTEMPT).toBe(String(restarts));
  });

  it.each([
    { what: "a CPU pod", gpus: 0, gpuFraction: 0, nproc: "1" },
    { what: "a pod sharing a fraction of a GPU", gpus: 0, gpuFraction: 0.5, nproc: "1" },
    { what: "a pod of one GPU", gpus: 1, gpuFraction: 0, nproc: "1" },
    { what: "a pod of 4 GPUs", gpus: 4, gpuFraction: 0, nproc: "4" },
    { what: "a pod of 8 GPUs", gpus: 8, gpuFraction: 0, nproc: "8" },
  ])("PET_NPROC_PER_NODE is $nproc for $what", ({ gpus, gpuFraction, nproc }) => {
    const resources = { cpuMillis: 8000, memory: 2 ** 34, gpus, gpuFraction, gpuMemory: 0 };
    const j = job([task("worker", 2, { resources })]);
    expect(envOf(j, "worker-1").PET_NPROC_PER_NODE).toBe(nproc);
  });

  it("follows each pod's own task", () => {
    const cpu = { cpuMillis: 1000, memory: 2 ** 30, gpus: 0, gpuFraction: 0, gpuMemory: 0 };
    const gpu = { cpuMillis: 8000, memory: 2 ** 34, gpus: 4, gpuFraction: 0, gpuMemory: 0 };
    const j = job([task("coordinator", 1, { resources: cpu }), task("trainer", 2, { resources: gpu })]);
    expect(envOf(j, "coordinator-0").PET_NPROC_PER_NODE).toBe("1");
    expect(envOf(j, "trainer-0").PET_NPROC_PER_NODE).toBe("4");
    expect(envOf(j, "trainer-1").PET_NPROC_PER_NODE).toBe("4");
  });
});

describe("rendezvousEnvironment: large jobs", () => {
  /** The peers as a pod derives them from FLEETQ_TASKS and FLEETQ_SUBDOMAIN. */
  function derivedPeers(env: Record<string, string>): string[] {
    return env.FLEETQ_TASKS!.split(",").flatMap((entry) => {
      const [name, replicas] = entry.split(":");
      return Array.from({ length: Number(replicas) }, (_, i) => `${name}-${i}.${env.FLEETQ_SUBDOMAIN}`);
    });
  }

  it.each([
    { pods: MAX_LISTED_PEERS, listed: true },
    { pods: MAX_LISTED_PEERS + 1, listed: false },
  ])("a job of $pods pods lists its peers: $listed", ({ pods, listed }) => {
    const j = job([task("master", 1), task("worker", pods - 1)]);
    const env = envOf(j, "worker-0");
    expect(env.FLEETQ_WORLD_SIZE).toBe(String(pods));
    if (listed) expect(env.FLEETQ_PEERS!.split(",")).toHaveLength(pods);
    else expect(env).not.toHaveProperty("FLEETQ_PEERS");
  });

  it.each([
    { what: "master + 299 workers", tasks: [task("master", 1), task("worker", 299)] },
    { what: "three tasks", tasks: [task("ps", 2), task("chief", 1), task("worker", 500)] },
  ])("$what: FLEETQ_TASKS and FLEETQ_SUBDOMAIN derive every peer in rank order", ({ tasks }) => {
    const j = job(tasks);
    expect(worldSize(j)).toBeGreaterThan(MAX_LISTED_PEERS);
    const expected = podPlaces(j).map((p) => peerAddress(j, p.task, p.index));
    for (const pod of [`${tasks[0]!.name}-0`, "worker-17"]) {
      const env = envOf(j, pod);
      expect(env).not.toHaveProperty("FLEETQ_PEERS");
      expect(env.FLEETQ_TASKS).toBe(tasks.map((t) => `${t.name}:${t.replicas}`).join(","));
      expect(env.FLEETQ_SUBDOMAIN).toBe(jobServiceName(j.id, j.name));
      const derived = derivedPeers(env);
      expect(derived).toHaveLength(worldSize(j));
      expect(derived).toEqual(expected);
      expect(derived[Number(env.FLEETQ_RANK)]).toBe(`${pod}.${env.FLEETQ_SUBDOMAIN}`);
      expect(derived[0]).toBe(env.MASTER_ADDR);
    }
  });
});

describe("podPlace", () => {
  const j = masterWorkers();

  it.each([
    { pod: "master-0", task: "master", index: 0, rank: 0 },
    { pod: "worker-0", task: "worker", index: 0, rank: 1 },
    { pod: "worker-1", task: "worker", index: 1, rank: 2 },
    { pod: "worker-2", task: "worker", index: 2, rank: 3 },
  ])("finds $pod: task $task, index $index, rank $rank", ({ pod, task: taskName, index, rank }) => {
    const p = podPlace(j, pod);
    expect(p).not.toBeNull();
    expect(p!.task).toBe(j.tasks.find((t) => t.name === taskName));
    expect(p!.index).toBe(index);
    expect(p!.rank).toBe(rank);
  });

  it.each([
    "worker-3",
    "master-1",
    "worker-01",
    "worker--1",
    "worker-1.0",
    "worker-",
    "worker",
    "ps-0",
    "",
    "Worker-1",
    "worker-1e0",
    "worker- 1",
  ])("finds no pod %j", (pod) => {
    expect(podPlace(j, pod)).toBeNull();
  });

  it("agrees with podPlaces for every pod", () => {
    const tricky = job([task("a", 2), task("a-1", 3), task("b", 11)]);
    for (const p of podPlaces(tricky)) expect(podPlace(tricky, `${p.task.name}-${p.index}`)).toEqual(p);
  });
});

describe("names", () => {
  const jobNames = [
    { what: "a short name", name: "train" },
    { what: "a name of 100 characters", name: "a".repeat(100) },
    { what: "a name starting with a digit", name: "1st-run" },
    { what: "a name of digits only", name: "20240611" },
    { what: "a name with uppercase and underscores", name: "Train_Model_V2" },
    { what: "a name of 63 characters", name: `llm-${"x".repeat(59)}` },
    { what: "a name with nothing usable", name: "___" },
  ];

  it.each(jobNames)("jobServiceName of $what is a DNS-1035 label", ({ name }) => {
    const service = jobServiceName(JOB_ID, name);
    expect(service).toMatch(DNS_1035);
    expect(service.length).toBeLessThanOrEqual(63);
    expect(jobServiceName(JOB_ID, name)).toBe(service);
  });

  it.each(jobNames)("jobServiceName of $what differs between two jobs of that name", ({ name }) => {
    expect(jobServiceName(JOB_ID, name)).not.toBe(jobServiceName(OTHER_JOB_ID, name));
  });

  const podNames = [
    { what: "a short name", name: "train", pod: "worker-0" },
    { what: "a name of 100 characters", name: "a".repeat(100), pod: "worker-12" },
    { what: "a name with uppercase and underscores", name: "Train_Model_V2", pod: "master-0" },
    { what: "a long name and a long task", name: "b".repeat(80), pod: `${"t".repeat(40)}-255` },
  ];

  it.each(podNames)("uniquePodName of $what is a DNS-1123 label for every attempt", ({ name, pod }) => {
    const attempts = [0, 1, 2].map((r) => uniquePodName(JOB_ID, name, pod, r));
    for (const n of attempts) {
      expect(n).toMatch(DNS_1123);
      expect(n.length).toBeLessThanOrEqual(63);
    }
    expect(new Set(attempts).size).toBe(3);
    expect(attempts[0]).not.toMatch(/-r\d+$/);
    expect(attempts[1]).toMatch(/-r1$/);
    expect(attempts[2]).toMatch(/-r2$/);
    expect(uniquePodName(JOB_ID, name, pod)).toBe(attempts[0]);
    expect(uniquePodName(JOB_ID, name, pod, 1)).toBe(attempts[1]);
  });

  it.each(podNames)("uniquePodName of $what differs between jobs and between pods", ({ name, pod }) => {
    expect(uniquePodName(JOB_ID, name, pod)).not.toBe(uniquePodName(OTHER_JOB_ID, name, pod));
    expect(uniquePodName(JOB_ID, name, pod)).not.toBe(uniquePodName(JOB_ID, name, `${pod}1`));
  });
});

describe("renderPod", () => {
  it.each([
    { pod: "master-0", task: "master" },
    { pod: "worker-2", task: "worker" },
  ])("$pod of a multi-pod job: hostname, subdomain, scheduler, labels, annotations", ({ pod, task: t }) => {
    const j = masterWorkers();
    const rendered = renderPod(j, place(j, pod), 0);
    expect(rendered.kind).toBe("Pod");
    expect(rendered.metadata?.name).toBe(uniquePodName(j.id, j.name, pod, 0));
    expect(rendered.metadata?.namespace).toBe("research");
    expect(rendered.spec?.hostname).toBe(pod);
    expect(rendered.spec?.subdomain).toBe(jobServiceName(j.id, j.name));
    expect(rendered.spec?.schedulerName).toBe("fleetq");
    expect(rendered.metadata?.labels).toMatchObject({
      app: "trainer",
      "fleetq.io/job-id": JOB_ID,
      "fleetq.io/pod-group": "train",
      "fleetq.io/task": t,
    });
    expect(rendered.metadata?.annotations).toMatchObject({
      team: "ml",
      "fleetq.io/job-id": JOB_ID,
      "fleetq.io/pod-name": pod,
    });
  });

  it("a one-pod job's pod has its hostname and no subdomain, even when the template sets one", () => {
    const template = { spec: { subdomain: "stale", containers: [{ name: "main", image: "x" }] } };
    const j = job([task("main", 1, { template })]);
    const rendered = renderPod(j, place(j, "main-0"), 0);
    expect(rendered.spec?.hostname).toBe("main-0");
    expect(rendered.spec).not.toHaveProperty("subdomain");
    expect(rendered.spec?.schedulerName).toBe("fleetq");
  });

  it("names each attempt's pod apart", () => {
    const j = masterWorkers();
    const names = [0, 1, 2].map((r) => renderPod(j, place(j, "worker-0"), r).metadata?.name);
    expect(names).toEqual([0, 1, 2].map((r) => uniquePodName(j.id, j.name, "worker-0", r)));
    expect(new Set(names).size).toBe(3);
  });

  it("gives every container and init container the environment; a container's own variable wins", () => {
    const template = {
      spec: {
        initContainers: [
          { name: "fetch", image: "busybox", env: [{ name: "MASTER_PORT", value: "1" }] },
          { name: "wait", image: "busybox" },
        ],
        containers: [
          {
            name: "main",
            image: "trainer:1",
            env: [
              { name: "WORLD_SIZE", value: "99" },
              { name: "OWN", value: "$(RANK)" },
            ],
          },
          { name: "sidecar", image: "logger:1" },
        ],
      },
    };
    const j = masterWorkers({ tasks: [task("master", 1), task("worker", 3, { template })] });
    const p = place(j, "worker-1");
    const expected = rendezvousEnvironment(j, p, 1);
    const rendered = renderPod(j, p, 1);
    const containers = [...initContainersOf(rendered), ...containersOf(rendered)];
    expect(containers.map((c) => c.name)).toEqual(["fetch", "wait", "main", "sidecar"]);
    const own: Record<string, Record<string, string>> = {
      fetch: { MASTER_PORT: "1" },
      wait: {},
      main: { WORLD_SIZE: "99", OWN: "$(RANK)" },
      sidecar: {},
    };
    for (const c of containers) {
      const env = c.env ?? [];
      const mine = own[c.name]!;
      // Each variable once; the container's own value where it sets one, fleetq's elsewhere.
      expect(envMap(env as EnvVar[])).toEqual({
        ...Object.fromEntries(expected.map((e) => [e.name, e.value])),
        ...mine,
      });
      // fleetq's variables first, then the container's own entries, in their order.
      const ownNames = Object.keys(mine);
      expect(env.map((e) => e.name)).toEqual([
        ...expected.map((e) => e.name).filter((n) => !ownNames.includes(n)),
        ...ownNames,
      ]);
    }
  });

  it("accepts a bare PodSpec as template", () => {
    const template = { containers: [{ name: "main", image: "trainer:1" }] };
    const j = masterWorkers({ tasks: [task("master", 1, { template }), task("worker", 3)] });
    const rendered = renderPod(j, place(j, "master-0"), 0);
    expect(rendered.spec?.hostname).toBe("master-0");
    expect(rendered.spec?.schedulerName).toBe("fleetq");
    expect(containersOf(rendered)[0]!.name).toBe("main");
    expect(envMap(containersOf(rendered)[0]!.env as EnvVar[]).RANK).toBe("0");
    expect(rendered.metadata?.labels?.["fleetq.io/job-id"]).toBe(JOB_ID);
    expect(rendered.metadata?.annotations?.["fleetq.io/pod-name"]).toBe("master-0");
  });

  it.each([
    { what: "null", template: null },
    { what: "a string", template: "image: trainer" },
    { what: "a Pod whose spec is not an object", template: { spec: "containers" } },
  ])("throws for a task with $what as template", ({ template }) => {
    const j = job([task("main", 2, { template })]);
    expect(() => renderPod(j, place(j, "main-0"), 0)).toThrow(Error);
    expect(() => renderPod(j, place(j, "main-0"), 0)).toThrow(/no pod template/);
  });

  it("does not change the task's template", () => {
    const template = defaultTemplate();
    const before = structuredClone(template);
    const j = job([task("main", 2, { template })]);
    renderPod(j, place(j, "main-1"), 0);
    expect(template).toEqual(before);
  });
});

describe("renderService", () => {
  it("is null for a one-pod job", () => {
    expect(renderService(job([task("main", 1)]))).toBeNull();
  });

  it.each([
    { what: "master+workers", j: masterWorkers() },
    { what: "one task of two pods", j: job([task("worker", 2)]) },
  ])("is a headless Service selecting the pods of $what", ({ j }) => {
    const service = renderService(j);
    expect(service).not.toBeNull();
    expect(service!.kind).toBe("Service");
    expect(service!.metadata?.name).toBe(jobServiceName(j.id, j.name));
    expect(service!.metadata?.namespace).toBe(j.namespace);
    expect(service!.spec?.clusterIP).toBe("None");
    expect(service!.spec?.publishNotReadyAddresses).toBe(true);
    const selector = service!.spec?.selector ?? {};
    expect(Object.keys(selector)).toEqual(["fleetq.io/job-id"]);
    for (const p of podPlaces(j)) {
      const labels = renderPod(j, p, 0).metadata?.labels ?? {};
      expect(labels["fleetq.io/job-id"]).toBe(selector["fleetq.io/job-id"]);
      expect(renderPod(j, p, 0).spec?.subdomain).toBe(service!.metadata?.name);
    }
  });
});

describe("renderJob", () => {
  it.each([0, 2])("renders the Service, then the pods in rank order (restarts %i)", (restarts) => {
    const j = masterWorkers();
    const objects = renderJob(j, restarts);
    expect(objects.map((o) => o.kind)).toEqual(["Service", "Pod", "Pod", "Pod", "Pod"]);
    expect((objects[0] as V1Service).metadata?.name).toBe(jobServiceName(j.id, j.name));
    const pods = objects.slice(1) as V1Pod[];
    const order = ["master-0", "worker-0", "worker-1", "worker-2"];
    expect(pods.map((p) => p.metadata?.annotations?.["fleetq.io/pod-name"])).toEqual(order);
    expect(pods.map((p) => p.metadata?.name)).toEqual(
      order.map((o) => uniquePodName(j.id, j.name, o, restarts)),
    );
    pods.forEach((p, rank) => {
      expect(envMap(containersOf(p)[0]!.env as EnvVar[])).toMatchObject({
        RANK: String(rank),
        FLEETQ_RESTART_ATTEMPT: String(restarts),
      });
    });
  });

  it("renders a one-pod job as its pod alone", () => {
    const objects = renderJob(job([task("main", 1)]));
    expect(objects.map((o) => o.kind)).toEqual(["Pod"]);
    expect((objects[0] as V1Pod).spec?.hostname).toBe("main-0");
  });
});

describe("templateOverrides", () => {
  const where = (i: number) => `tasks[${i}].template`;

  it("is empty when no template sets a rendezvous variable", () => {
    const template = {
      spec: {
        initContainers: [{ name: "setup", image: "x", env: [{ name: "DATA", value: "/data" }] }],
        containers: [{ name: "main", image: "x", env: [{ name: "NCCL_DEBUG", value: "INFO" }] }],
      },
    };
    expect(
      templateOverrides(
        masterWorkers({ tasks: [task("master", 1, { template }), task("worker", 3)] }),
        where,
      ),
    ).toEqual([]);
    expect(templateOverrides(masterWorkers(), where)).toEqual([]);
  });

  it("warns once per container and variable it overrides, naming the task's template", () => {
    const master = {
      spec: {
        containers: [
          {
            name: "main",
            image: "x",
            env: [
              { name: "RANK", value: "0" },
              { name: "NCCL_DEBUG", value: "INFO" },
              { name: "WORLD_SIZE", value: "4" },
            ],
          },
        ],
      },
    };
    const worker = {
      spec: {
        initContainers: [{ name: "setup", image: "x", env: [{ name: "MASTER_ADDR", value: "m" }] }],
        containers: [
          { name: "main", image: "x", env: [{ name: "MASTER_ADDR", value: "m" }] },
          { name: "sidecar", image: "y" },
        ],
      },
    };
    const j = masterWorkers({
      tasks: [task("master", 1, { template: master }), task("worker", 3, { template: worker })],
    });
    const warnings = templateOverrides(j, where);
    expect(warnings).toHaveLength(4);
    const expected = [
      { task: 0, container: "main", name: "RANK" },
      { task: 0, container: "main", name: "WORLD_SIZE" },
      { task: 1, container: "setup", name: "MASTER_ADDR" },
      { task: 1, container: "main", name: "MASTER_ADDR" },
    ];
    for (const e of expected)
      expect(
        warnings.filter(
          (w) =>
            w.startsWith(`tasks[${e.task}].template:`) &&
            w.includes(`"${e.container}"`) &&
            w.includes(` ${e.name} `),
        ),
      ).toHaveLength(1);
    expect(warnings.some((w) => w.includes("NCCL_DEBUG"))).toBe(false);
    expect(warnings.some((w) => w.includes("sidecar"))).toBe(false);
  });
});
