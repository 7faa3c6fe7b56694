// Kubernetes workloads (a Job, JobSet, PyTorchJob, MPIJob submitted as manifests) end to end,
// against the real API (real PostgreSQL, real Redis), real scheduling cycles and the fake
// Kubernetes API server, with the test playing each kind's controller as the real one names,
// labels and owns what it makes: the object is created once on the chosen cluster, marked and
// handed to fleetq's scheduler; its controller's pods are bound where the cycle placed them, as a
// gang; their logs are read by the job's pod names; its end ends the job; cancel deletes it; a pod its controller makes again is placed again;
// a second delivery of the create creates nothing; refusals happen before anything is created.
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubernetesBackend } from "../../src/agent/backends/kubernetes/kubernetes-backend.js";
import { bindQueueName } from "../../src/protocol/bind-request.js";
import { bindRequestMessages } from "../../src/store/operations/dispatch.js";
import { gql } from "../helpers/api.js";
import { TEST_REDIS_URL } from "../helpers/redis.js";
import { type ApiAgent, startApiAgent } from "./api-agent.js";
import { FakeControllers } from "./fake-controllers.js";
import { FakeKubeApiServer } from "./fake-kube-apiserver.js";
import type { Json } from "./fake-kube-store.js";
import { until } from "./until.js";
import { signed } from "./bind-requests.js";

const log = pino({ level: process.env.AGENT_TEST_LOG ?? "silent" });

interface JobView {
  id: string;
  name: string;
  state: string;
  minMember: number;
  tasks: { name: string; replicas: number; resources: { cpu: number; memory: string; gpu: number } }[];
  pods: { name: string; state: string; node: string | null }[];
  events: { kind: string; message: string }[];
}

const JOB = `query($id: ID!) { job(id: $id) { id name state minMember
  tasks { name replicas resources { cpu memory gpu } }
  pods(first: 20) { name state node } events(first: 30) { kind message } } }`;
const SUBMIT = "mutation($input: SubmitWorkloadInput!) { submitWorkload(input: $input) { id name } }";

const container = (name: string, resources: Json = { limits: { "nvidia.com/gpu": 1 } }) => ({
  name,
  image: "pytorch/pytorch:2.4.0-cuda12.1-cudnn9-runtime",
  command: ["torchrun", "train.py"],
  resources,
});

function pyTorchJob(name: string, workers = 2, restartPolicy = "OnFailure"): Json {
  const replica = (replicas: number) => ({
    replicas,
    restartPolicy,
    template: { spec: { containers: [container("pytorch")] } },
  });
  return {
    apiVersion: "kubeflow.org/v1",
    kind: "PyTorchJob",
    metadata: { name, namespace: "ml", labels: { "kueue.x-k8s.io/queue-name": "train" } },
    spec: { pytorchReplicaSpecs: { Master: replica(1), Worker: replica(workers) } },
  };
}

function indexedJob(name: string, pods: number, backoffLimit = 0): Json {
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name, namespace: "ml", labels: { "fleetq.io/queue": "train" } },
    spec: {
      completionMode: "Indexed",
      completions: pods,
      parallelism: pods,
      backoffLimit,
      template: {
        spec: {
          restartPolicy: "Never",
          containers: [container("shard", { requests: { cpu: "2", memory: "4Gi" } })],
        },
      },
    },
  };
}

function jobSet(name: string, maxRestarts = 0): Json {
  return {
    apiVersion: "jobset.x-k8s.io/v1alpha2",
    kind: "JobSet",
    metadata: { name, namespace: "ml", labels: { "fleetq.io/queue": "train" } },
    spec: {
      failurePolicy: { maxRestarts },
      replicatedJobs: [
        {
          name: "workers",
          replicas: 2,
          template: {
            spec: {
              parallelism: 2,
              completions: 2,
              backoffLimit: 0,
              template: { spec: { restartPolicy: "Never", containers: [container("slice")] } },
            },
          },
        },
      ],
    },
  };
}

function mpiJob(name: string): Json {
  return {
    apiVersion: "kubeflow.org/v2beta1",
    kind: "MPIJob",
    metadata: { name, namespace: "ml", labels: { "fleetq.io/queue": "train" } },
    spec: {
      slotsPerWorker: 1,
      runPolicy: { cleanPodPolicy: "Running" },
      mpiReplicaSpecs: {
        Launcher: {
          replicas: 1,
          template: {
            spec: {
              containers: [container("launcher", { requests: { cpu: "1", memory: "1Gi" } })],
            },
          },
        },
        Worker: { replicas: 2, template: { spec: { containers: [container("worker")] } } },
      },
    },
  };
}

describe("Kubernetes workloads", () => {
  let env: ApiAgent;
  let kube: FakeKubeApiServer;
  let controllers: FakeControllers;
  let redis: Redis;
  let queue: Queue;

  const backend = () =>
    new KubernetesBackend({ cluster: "c1", kubeConfig: kube.kubeConfig(), defaultNamespace: "default", log });
  const admin = <T>(query: string, variables: Record<string, unknown> = {}) => env.admin<T>(query, variables);
  const job = async (id: string) => (await admin<{ job: JobView }>(JOB, { id })).job;
  const submit = async (manifest: Json, extra: Json = {}) =>
    (
      await admin<{ submitWorkload: { id: string } }>(SUBMIT, {
        input: { manifest, cluster: "c1", ...extra },
      })
    ).submitWorkload.id;
  /** Cycles and dispatches until nothing more is placed or evicted. */
  const schedule = async () => {
    for (let i = 0; i < 5; i++) {
      await env.cycle();
      if ((await env.dispatch()) === 0) return;
    }
  };
  /** The pods the workload's controller made in the cluster (of the job, by its label). */
  const kubePods = (id: string) =>
    kube.store.list("pods", (p) => p.metadata.labels?.["fleetq.io/job-id"] === id) as Json[];
  const creates = (kind: string) => kube.effects.filter((e) => e.startsWith(`create ${kind} `));
  const untilState = (id: string, state: string) =>
    until(async () => expect((await job(id)).state).toBe(state), 15_000);
  /** The job's pods the API has running are the controller's pods running, on the same nodes. */
  async function expectBoundAsPlaced(id: string) {
    await until(async () => {
      const placed = (await job(id)).pods.filter((p) => p.state === "RUNNING").map((p) => p.node!);
      const bound = kubePods(id)
        .filter((p) => p.spec.nodeName && p.status.phase === "Running")
        .map((p) => p.spec.nodeName as string);
      expect(bound.length).toBeGreaterThan(0);
      expect(bound.sort()).toEqual(placed.sort());
    });
  }

  beforeAll(async () => {
    kube = await FakeKubeApiServer.start();
    controllers = new FakeControllers(kube);
    controllers.start();
    for (const name of ["n1", "n2", "n3", "n4"]) kube.addNode({ name, gpus: 8, cpu: "16", memory: "64Gi" });
    env = await startApiAgent({
      label: "fleetq-workloads",
      queue: "train",
      backend: backend(),
      logger: log,
    });
    await admin(`mutation { updateQueue(name: "train", input: { namespaces: ["ml"] }) { name } }`);
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
    queue = new Queue(bindQueueName("c1"), { connection: redis, prefix: env.queuePrefix });
    await env.untilNodes(4);
  });

  afterAll(async () => {
    controllers?.stop();
    await queue?.close();
    redis?.disconnect();
    await env?.close();
    await kube?.stop();
  });

  it("creates a PyTorchJob once, marked and handed to fleetq; binds its pods as a gang; its success ends the job", async () => {
    const id = await submit(pyTorchJob("ddp"));
    const submitted = await job(id);
    expect(submitted.minMember).toBe(3);
    expect(submitted.tasks).toEqual([
      { name: "master", replicas: 1, resources: { cpu: 500, memory: "1073741824", gpu: 1 } },
      { name: "worker", replicas: 2, resources: { cpu: 500, memory: "1073741824", gpu: 1 } },
    ]);
    expect(creates("pytorchjob")).toEqual([]); // nothing on the cluster before admission

    await schedule();
    await untilState(id, "RUNNING");
    expect(creates("pytorchjob")).toEqual(["create pytorchjob ml/ddp"]);
    const object = kube.object("kubeflow.org/pytorchjobs", "ml", "ddp")!;
    expect(object.metadata.labels["fleetq.io/job-id"]).toBe(id);
    expect(object.metadata.annotations).toMatchObject({ "fleetq.io/job-id": id, "fleetq.io/queue": "train" });
    for (const type of ["Master", "Worker"]) {
      const template = object.spec.pytorchReplicaSpecs[type].template;
      expect(template.spec.schedulerName).toBe("fleetq");
      expect(template.metadata.labels["fleetq.io/job-id"]).toBe(id);
      expect(template.metadata.annotations["fleetq.io/workload-kind"]).toBe("PyTorchJob");
      // The queue's default request, written in (a LimitRange would have given it).
      expect(template.spec.containers[0].resources).toEqual({
        limits: { "nvidia.com/gpu": 1 },
        requests: { cpu: "500m", memory: "1Gi" },
      });
    }
    await until(() => expect(kubePods(id).filter((p) => p.status.phase === "Running")).toHaveLength(3));
    await expectBoundAsPlaced(id);
    const pods = (await job(id)).pods;
    expect(pods.map((p) => p.name).sort()).toEqual(["master-0", "worker-0", "worker-1"]);
    expect(pods.every((p) => p.state === "RUNNING")).toBe(true);
    // The API's master-0 is the controller's ddp-master-0, on the node the cycle chose.
    const master = pods.find((p) => p.name === "master-0")!;
    expect(kube.pod("ml", "ddp-master-0")!.spec.nodeName).toBe(master.node);

    // Its pods' logs, by the job's pod names (the controller's pod of each place).
    kube.writeLog("ml", "ddp-worker-1", "epoch 1 loss 0.42");
    const { podLogs } = await admin<{ podLogs: string }>(
      `query($id: ID!) { podLogs(job: $id, pod: "worker-1") }`,
      { id },
    );
    expect(podLogs).toBe("epoch 1 loss 0.42\n");

    for (const p of ["ddp-worker-0", "ddp-worker-1", "ddp-master-0"]) kube.setPodPhase("ml", p, "Succeeded");
    await untilState(id, "SUCCEEDED");
    const { events } = await job(id);
    expect(events.find((e) => e.kind === "job.succeeded")?.message).toContain("PyTorchJobSucceeded");
    expect(creates("pytorchjob")).toHaveLength(1);
  });

  it("a pod deleted from under a running PyTorchJob is made again by its controller and placed again", async () => {
    const id = await submit(pyTorchJob("healed", 2));
    await schedule();
    await untilState(id, "RUNNING");
    await until(() => expect(kubePods(id).filter((p) => p.status.phase === "Running")).toHaveLength(3));
    const before = kube.pod("ml", "healed-worker-1")!.metadata.uid;
    kube.deletePod("ml", "healed-worker-1"); // kubectl delete pod, a node drain
    await until(() => expect(kube.pod("ml", "healed-worker-1")?.metadata.uid).not.toBe(before ?? undefined));
    await until(async () => {
      await schedule();
      expect(kube.pod("ml", "healed-worker-1")?.status.phase).toBe("Running");
    });
    await expectBoundAsPlaced(id);
    const j = await job(id);
    expect(j.state).toBe("RUNNING");
    expect(j.pods.map((p) => p.state)).toEqual(["RUNNING", "RUNNING", "RUNNING"]);
    await admin(`mutation($id: ID!) { cancelJob(id: $id) { id } }`, { id });
    await schedule();
    await untilState(id, "CANCELLED");
  });

  it("a second delivery of the create, also to a restarted agent, creates nothing", async () => {
    const id = await submit(pyTorchJob("twice", 1));
    await schedule();
    await untilState(id, "RUNNING");
    const ids = (
      await admin<{ job: { bindRequests: { id: string; kind: string }[] } }>(
        `query($id: ID!) { job(id: $id) { bindRequests { id kind } } }`,
        { id },
      )
    ).job.bindRequests.map((b) => b.id);
    const redeliver = async () => {
      const messages = await bindRequestMessages(env.api.server.store, ids);
      await queue.addBulk(
        messages.map((data) => ({
          name: data.kind,
          data: signed(data),
          opts: { jobId: `${data.id}-again-${Date.now()}` },
        })),
      );
    };
    await redeliver();
    await env.restart(backend());
    await redeliver();
    await until(async () => {
      const counts = await queue.getJobCounts("wait", "active", "delayed");
      expect((counts.wait ?? 0) + (counts.active ?? 0) + (counts.delayed ?? 0)).toBe(0);
    });
    expect(creates("pytorchjob").filter((e) => e.endsWith("/twice"))).toHaveLength(1);
    expect(kubePods(id)).toHaveLength(2);
    await expectBoundAsPlaced(id);
    expect((await job(id)).state).toBe("RUNNING");
    await admin(`mutation($id: ID!) { cancelJob(id: $id) { id } }`, { id });
    await schedule();
    await untilState(id, "CANCELLED");
  });

  it("an Indexed Job's pods are bound by their completion index; its failure ends the job FAILED", async () => {
    const id = await submit(indexedJob("shards", 3));
    await schedule();
    await untilState(id, "RUNNING");
    const pods = kubePods(id);
    expect(pods).toHaveLength(3);
    for (const p of pods) {
      expect(p.metadata.name).toMatch(/^shards-[0-2]-[a-z0-9]{5}$/);
      expect(p.spec.schedulerName).toBe("fleetq");
    }
    await expectBoundAsPlaced(id);
    const api = (await job(id)).pods;
    for (const p of pods) {
      const index = p.metadata.labels["batch.kubernetes.io/job-completion-index"];
      expect(api.find((a) => a.name === `job-${index}`)?.node).toBe(p.spec.nodeName);
    }
    const second = pods.find((p) => p.metadata.labels["batch.kubernetes.io/job-completion-index"] === "1")!;
    kube.setPodPhase("ml", second.metadata.name, "Failed", "exit 3", new Date(), 3);
    await untilState(id, "FAILED");
    const { events } = await job(id);
    expect(events.find((e) => e.kind === "job.failed")?.message).toContain("BackoffLimitExceeded");
  });

  it("a Job whose completions exceed its parallelism runs in waves: each new pod takes a finished one's place", async () => {
    const manifest = indexedJob("waves", 2);
    manifest.spec.completions = 5;
    const id = await submit(manifest);
    const submitted = await job(id);
    expect(submitted.minMember).toBe(1);
    expect(submitted.tasks.map((t) => `${t.name}×${t.replicas}`)).toEqual(["job×2"]);
    await schedule();
    await untilState(id, "RUNNING");
    const finished = new Set<string>();
    // Each round: the running pods succeed, the controller makes the next indices, fleetq places them.
    for (let round = 0; round < 3; round++) {
      await until(async () => {
        await schedule();
        const running = kubePods(id).filter(
          (p) => p.status.phase === "Running" && !finished.has(p.metadata.name),
        );
        expect(running.length).toBeGreaterThan(0);
      });
      await expectBoundAsPlaced(id);
      for (const p of kubePods(id).filter((p) => p.status.phase === "Running")) {
        finished.add(p.metadata.name);
        kube.setPodPhase("ml", p.metadata.name, "Succeeded");
      }
      if (finished.size === 5) break;
    }
    const indices = kubePods(id).map((p) => p.metadata.labels["batch.kubernetes.io/job-completion-index"]);
    expect([...new Set(indices)].sort()).toEqual(["0", "1", "2", "3", "4"]);
    await untilState(id, "SUCCEEDED");
    expect((await job(id)).events.find((e) => e.kind === "job.succeeded")?.message).toContain(
      "CompletionsReached",
    );
  });

  it("cancel deletes a JobSet in the background: its Jobs and pods go, their resources come free", async () => {
    const id = await submit(jobSet("slices"));
    expect((await job(id)).tasks.map((t) => `${t.name}×${t.replicas}`)).toEqual([
      "workers-0×2",
      "workers-1×2",
    ]);
    await schedule();
    await untilState(id, "RUNNING");
    expect(kubePods(id)).toHaveLength(4);
    expect(kube.objectsOf("batch/jobs").filter((j) => j.metadata.name.startsWith("slices-"))).toHaveLength(2);
    await expectBoundAsPlaced(id);
    const api = (await job(id)).pods;
    for (const p of kubePods(id)) {
      const task = `workers-${p.metadata.labels["jobset.sigs.k8s.io/job-index"]}`;
      const index = p.metadata.labels["batch.kubernetes.io/job-completion-index"];
      expect(api.find((a) => a.name === `${task}-${index}`)?.node).toBe(p.spec.nodeName);
    }

    await admin(`mutation($id: ID!) { cancelJob(id: $id) { id } }`, { id });
    await schedule();
    await until(() => expect(kube.effects).toContain("delete jobset ml/slices Background"));
    await until(() => expect(kubePods(id)).toEqual([]));
    expect(kube.objectsOf("batch/jobs").filter((j) => j.metadata.name.startsWith("slices-"))).toEqual([]);
    await untilState(id, "CANCELLED");
    await until(async () =>
      expect((await job(id)).pods.filter((p) => p.state === "RUNNING" || p.state === "RELEASING")).toEqual(
        [],
      ),
    );
  });

  it("a pod its controller makes again is placed again; the JobSet's own restart shows in the job's events", async () => {
    const id = await submit(jobSet("elastic", 1));
    await schedule();
    await untilState(id, "RUNNING");
    const first = kubePods(id).map((p) => p.metadata.uid as string);
    // A pod fails: its Job fails (backoffLimit 0), the JobSet restarts every Job.
    kube.setPodPhase("ml", kubePods(id)[0]!.metadata.name, "Failed", "exit 1");
    await until(() => expect(controllers.actions).toContain("restart jobset ml/elastic"));
    await until(() => {
      const now = kubePods(id);
      expect(now).toHaveLength(4);
      expect(now.some((p) => first.includes(p.metadata.uid))).toBe(false);
    });
    // The new pods are placed as a gang again and bound.
    await until(async () => {
      await schedule();
      expect(kubePods(id).filter((p) => p.spec.nodeName && p.status.phase === "Running")).toHaveLength(4);
    }, 20_000);
    await expectBoundAsPlaced(id);
    await until(async () => {
      const j = await job(id);
      expect(j.state).toBe("RUNNING");
      expect(j.events.some((e) => e.kind === "workload.status" && e.message.includes("restart"))).toBe(true);
    });
    for (const p of kubePods(id)) kube.setPodPhase("ml", p.metadata.name, "Succeeded");
    await untilState(id, "SUCCEEDED");
  });

  it("an MPIJob's launcher and workers run as one gang; the launcher's success ends it", async () => {
    const id = await submit(mpiJob("allreduce"));
    expect((await job(id)).tasks.map((t) => `${t.name}×${t.replicas}`)).toEqual(["launcher×1", "worker×2"]);
    await schedule();
    await untilState(id, "RUNNING");
    await until(() => expect(kubePods(id).filter((p) => p.status.phase === "Running")).toHaveLength(3));
    await expectBoundAsPlaced(id);
    const launcher = kubePods(id).find((p) => p.metadata.name.startsWith("allreduce-launcher-"))!;
    expect(launcher).toBeDefined();
    kube.setPodPhase("ml", launcher.metadata.name, "Succeeded");
    await untilState(id, "SUCCEEDED");
    // cleanPodPolicy Running: the workers go; nothing of the job holds a node any more.
    await until(async () =>
      expect((await job(id)).pods.filter((p) => p.state === "RUNNING" || p.state === "RELEASING")).toEqual(
        [],
      ),
    );
  });

  it("refuses, before anything is created, an unsupported kind, a template the queue's policy refuses, a namespace outside the queue", async () => {
    const before = kube.created.length;
    const refused = async (manifest: Json) => {
      const r = await gql(env.api.url, env.api.adminToken, SUBMIT, { input: { manifest } });
      expect(r.data?.submitWorkload ?? null).toBeNull();
      return r.errors?.[0] as { message: string; extensions: { code: string; field?: string } };
    };
    const deployment = await refused({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web", labels: { "fleetq.io/queue": "train" } },
      spec: {},
    });
    expect(deployment.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "input.manifest.kind" });
    expect(deployment.message).toContain(
      "batch/v1 Job, jobset.x-k8s.io/v1alpha2 JobSet, kubeflow.org/v1 PyTorchJob, kubeflow.org/v2beta1 MPIJob",
    );

    const privileged = pyTorchJob("root");
    privileged.spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].securityContext = {
      privileged: true,
    };
    expect((await refused(privileged)).extensions.field).toBe(
      "input.manifest.spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].securityContext.privileged",
    );

    const elsewhere = indexedJob("outside", 1);
    elsewhere.metadata.namespace = "kube-system";
    const outside = await refused(elsewhere);
    expect(outside.extensions.field).toBe("input.manifest.metadata.namespace");
    expect(outside.message).toContain("kube-system");

    const { jobs } = await admin<{ jobs: { edges: { node: { name: string } }[] } }>(
      `{ jobs(filter: { queue: "train" }, first: 100) { edges { node { name } } } }`,
    );
    expect(jobs.edges.map((e) => e.node.name)).not.toContain("root");
    expect(jobs.edges.map((e) => e.node.name)).not.toContain("outside");
    expect(kube.created.length).toBe(before);
  });
});
