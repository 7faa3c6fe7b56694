// The Kubernetes agent acts only on pods it created or bound. Anyone who can create pods in some
// namespace can write a fleetq job's annotations (job id, pod name, even a copy of a real pod's
// seal) on a pod of their own: the agent ignores it (logged once, counted) and never reports its
// phase or its deletion as the job's — also after the agent restarts. A pod created in advance
// under a job's predictable pod name is not bound unless it is exactly the pod fleetq would make.
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { KubernetesBackend } from "../../src/agent/backends/kubernetes/kubernetes-backend.js";
import { JOB_ID_KEY, WORKLOAD_KIND_KEY } from "../../src/protocol/labels.js";
import { uniquePodName } from "../../src/render/names.js";
import { RecordedEvents } from "../agent/backend-events.js";
import { CONTAINER_TEMPLATE, type RequestShape, bindRequest, renderJobFor } from "../agent/bind-requests.js";
import { FakeKubeApiServer } from "../agent/fake-kube-apiserver.js";
import { until } from "../agent/until.js";
import { FakeControllers } from "../agent/fake-controllers.js";
import { deriveWorkload, workloadObject } from "../../src/workload/index.js";

const log = pino({ level: "silent" });
const k8s = (pod: string) => uniquePodName("job-1", "train", pod);

describe("look-alike and pre-existing pods", () => {
  let kube: FakeKubeApiServer;
  let backend: KubernetesBackend;
  let events: RecordedEvents;

  async function startBackend(): Promise<void> {
    backend = new KubernetesBackend({
      cluster: "c1",
      kubeConfig: kube.kubeConfig(),
      defaultNamespace: "default",
      log,
      groupDebounceMs: 20,
    });
    events = new RecordedEvents();
    await backend.start(events);
  }

  beforeEach(async () => {
    kube = await FakeKubeApiServer.start();
    kube.addNode({ name: "n1", gpus: 8 });
    await startBackend();
  });

  afterEach(async () => {
    await backend.stop();
    await kube.stop();
  });

  const bind = (s: RequestShape, template: unknown = CONTAINER_TEMPLATE) =>
    backend.bind(bindRequest(s), renderJobFor(bindRequest(s), template));

  /** A tenant's pod on n1, running, with every annotation of the real pod of job-1's p-0. */
  function lookAlike(name: string, extra: Record<string, string> = {}) {
    const real = kube.pod("team-a", k8s("p-0"))!;
    kube.createPod({
      metadata: { name, namespace: "tenant", annotations: { ...real.metadata.annotations, ...extra } },
      spec: { schedulerName: "fleetq", nodeName: "n1", containers: [{ name: "c", image: "x" }] },
    });
    kube.setPodPhase("tenant", name, "Running");
  }

  it("ignores a look-alike pod's phase and deletion, before and after a restart", async () => {
    expect(await bind({ id: "br-1", pod: "p-0", node: "n1" })).toMatchObject({ ok: true });
    await until(() => expect(events.statesOf("p-0")).toEqual(["RUNNING"]));

    lookAlike("fake-p0");
    lookAlike("fake-workload-p0", { [WORKLOAD_KIND_KEY]: "Job" });
    // Counted once; a look-alike of a workload's pod is held back without a word (a real one may
    // come before its object's uid is known), and is never the job's either.
    await until(() => expect(backend.ignoredPods).toBe(1));
    kube.setPodPhase("tenant", "fake-p0", "Failed");
    kube.deletePod("tenant", "fake-p0");
    kube.deletePod("tenant", "fake-workload-p0");

    await backend.stop();
    await startBackend();
    await until(() => expect(events.statesOf("p-0")).toEqual(["RUNNING"]));
    lookAlike("fake-again");
    await until(() => expect(backend.ignoredPods).toBe(1));
    kube.deletePod("tenant", "fake-again");
    // The real pod's deletion is still heard.
    kube.deletePod("team-a", k8s("p-0"));
    await until(() => expect(events.statesOf("p-0")).toEqual(["RUNNING", "PENDING"]));
    expect(events.states.filter((s) => s.pod === "p-0").at(-1)?.message).toContain("deleted");
  });

  it("refuses to bind a pod made in advance under the job's pod name that differs from the job's", async () => {
    kube.createPod({
      metadata: { name: k8s("p-1"), namespace: "team-a", labels: { [JOB_ID_KEY]: "job-1" } },
      spec: {
        schedulerName: "fleetq",
        containers: [
          {
            name: "main",
            image: "busybox:1.36",
            command: ["sleep", "3600"],
            resources: { requests: { "nvidia.com/gpu": "8" }, limits: { "nvidia.com/gpu": "8" } },
          },
        ],
        restartPolicy: "Never",
      },
    });
    const r = await bind({ id: "br-2", pod: "p-1", node: "n1", gpus: 1 });
    expect(r.ok).toBe(false);
    expect(r.message).toContain(`pod team-a/${k8s("p-1")} exists but was not created by fleetq`);
    expect(r.message).toContain("resources");
    expect(kube.pod("team-a", k8s("p-1"))!.spec.nodeName).toBeUndefined();
    expect(kube.count("POST", /\/binding$/)).toBe(0);
  });

  it("neither takes nor deletes a workload object of the job's name that fleetq did not create", async () => {
    const controllers = new FakeControllers(kube);
    controllers.start();
    try {
      const template = { spec: { containers: [{ name: "main", image: "busybox:1.36" }] } };
      const workload = deriveWorkload(
        { apiVersion: "batch/v1", kind: "Job", metadata: { name: "w" }, spec: { template } },
        { cpuMillis: 500, memory: 2 ** 30 },
      );
      const shape = { id: "br-w", jobId: "job-w", jobName: "w", workload: "Job", pod: "main-0", node: "n1" };
      const request = bindRequest(shape);
      const job = {
        ...renderJobFor(request, null),
        tasks: workload.tasks.map((t) => ({
          name: t.name,
          replicas: t.replicas,
          resources: request.pod.resources,
          template: t.template,
        })),
        workload: { kind: "Job", apiVersion: "batch/v1", name: "w", manifest: workload.manifest },
      };
      // A tenant's Job under the workload's name, marked as the job's: not sealed by the agent.
      kube.createObject(
        "batch/jobs",
        workloadObject(workload, { id: job.id, name: job.name, queue: job.queue, namespace: "team-a" }),
      );
      const bound = await backend.bind(request, job);
      expect(bound.ok).toBe(false);
      expect(bound.message).toContain("that fleetq did not create for job job-w");
      const deleted = await backend.deleteWorkload(
        bindRequest({ ...shape, id: "br-d", kind: "delete", node: "" }),
        job,
      );
      expect(deleted).toEqual({ ok: true, message: "Job team-a/w is not one fleetq created: left alone" });
      expect(kube.object("batch/jobs", "team-a", "w")).toBeDefined();
    } finally {
      controllers.stop();
    }
  });

  it("adopts, once and when told, the running pods an agent without seals bound, and knows them after", async () => {
    // As an agent of an earlier version left it: bound, running, carrying the job's marks, no seal.
    kube.createPod({
      metadata: {
        name: "old-p0",
        namespace: "team-a",
        annotations: { [JOB_ID_KEY]: "job-old", "fleetq.io/pod-name": "main-0" },
        labels: { [JOB_ID_KEY]: "job-old" },
      },
      spec: { schedulerName: "fleetq", nodeName: "n1", containers: [{ name: "c", image: "x" }] },
    });
    kube.setPodPhase("team-a", "old-p0", "Running");
    await backend.stop();
    await startBackend();
    await until(() => expect(backend.ignoredPods).toBe(1));
    expect(events.statesOf("main-0")).toEqual([]);

    await backend.stop();
    backend = new KubernetesBackend({
      cluster: "c1",
      kubeConfig: kube.kubeConfig(),
      defaultNamespace: "default",
      log,
      adoptUnsealedPods: true,
    });
    events = new RecordedEvents();
    await backend.start(events);
    await until(() => expect(events.statesOf("main-0")).toEqual(["RUNNING"]));
    await until(() =>
      expect(kube.pod("team-a", "old-p0")!.metadata.annotations["fleetq.io/agent-seal"]).toBeDefined(),
    );

    // The next start, without the option, knows it by its seal.
    await backend.stop();
    await startBackend();
    await until(() => expect(events.statesOf("main-0")).toEqual(["RUNNING"]));
    expect(backend.ignoredPods).toBe(0);
  });
});
