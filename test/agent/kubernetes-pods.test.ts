// The Kubernetes backend's binds, evictions and pod phases against the fake API server
// over real HTTP: idempotent repeats, faults retried, pods users created for fleetq.
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { KubernetesBackend } from "../../src/agent/backends/kubernetes/kubernetes-backend.js";
import { podManifest } from "../../src/agent/backends/kubernetes/pod-manifest.js";
import { uniquePodName } from "../../src/render/names.js";
import { BIND_GENERATION_KEY, BIND_REQUEST_KEY } from "../../src/protocol/labels.js";
import { RecordedEvents } from "./backend-events.js";
import { CONTAINER_TEMPLATE, type RequestShape, bindRequest, renderJobFor } from "./bind-requests.js";
import { FakeKubeApiServer } from "./fake-kube-apiserver.js";
import { until } from "./until.js";

const log = pino({ level: "silent" });
const CREATE = /^\/api\/v1\/namespaces\/team-a\/pods$/;
const BINDING = /\/binding$/;
const EVICTION = /\/eviction$/;
type Shape = RequestShape & { template?: unknown };
const shape = (s: Shape) => s;

/** The Kubernetes name of a pod of job-1 ("train"). */
const k8s = (pod: string, jobId = "job-1", jobName = "train") => uniquePodName(jobId, jobName, pod);

describe("Kubernetes backend: pods", () => {
  let kube: FakeKubeApiServer;
  let backend: KubernetesBackend;
  let events: RecordedEvents;

  /** An agent's backend (started anew after a restart) on the fake cluster. */
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
    kube.addNode({ name: "n2", gpus: 8 });
    await startBackend();
  });

  /** Binds with the task's template (the agent fetches it by reference). */
  const bind = (s: Shape) =>
    backend.bind(
      bindRequest(s),
      renderJobFor(bindRequest(s), s.template === undefined ? CONTAINER_TEMPLATE : s.template),
    );

  afterEach(async () => {
    await backend.stop();
    await kube.stop();
  });

  it("creates the pod from the job's template for our scheduler and binds it to the node", async () => {
    const request = bindRequest({
      id: "br-1",
      pod: "train-0",
      node: "n1",
      gpuGroups: ["g-1"],
      gpuFraction: 0.5,
    });
    expect(await backend.bind(request, renderJobFor(request, CONTAINER_TEMPLATE))).toEqual({
      ok: true,
      message: "bound to n1",
    });

    const pod = kube.pod("team-a", k8s("train-0"))!;
    expect(pod.spec.schedulerName).toBe("fleetq");
    expect(pod.spec.nodeName).toBe("n1");
    expect(pod.spec.containers[0].image).toBe("busybox:1.36");
    expect(pod.metadata.labels).toMatchObject({
      "fleetq.io/job-id": "job-1",
      "fleetq.io/pod-group": "train",
    });
    expect(pod.metadata.annotations).toMatchObject({
      "fleetq.io/job-id": "job-1",
      "fleetq.io/job-name": "train",
      "fleetq.io/queue": "research",
      "fleetq.io/pod-group": "train",
      "fleetq.io/gpu-groups": "g-1",
      "fleetq.io/gpu-fraction": "0.5",
      "fleetq.io/bind-request": "br-1",
    });
    expect(kube.count("POST", CREATE, 201)).toBe(1);
    expect(kube.count("POST", BINDING, 201)).toBe(1);
    // The kubelet (fake) starts it: the pod watch reports RUNNING once.
    await until(() => expect(events.statesOf("train-0")).toEqual(["RUNNING"]));
  });

  it("pins a pod it creates to the chosen GPU devices: annotation, and NVIDIA_VISIBLE_DEVICES per GPU container", async () => {
    const container = (name: string, gpus?: string, env?: { name: string; value: string }[]) => ({
      name,
      image: "x",
      ...(env ? { env } : {}),
      resources: gpus ? { limits: { "nvidia.com/gpu": gpus } } : {},
    });
    const split = shape({
      id: "br-1",
      pod: "p-0",
      node: "n1",
      gpus: 4,
      gpuDevices: [4, 5, 6, 7],
      template: {
        spec: {
          containers: [
            container("a", "2", [{ name: "NVIDIA_VISIBLE_DEVICES", value: "all" }]),
            container("log"),
            container("b", "2"),
          ],
        },
      },
    });
    expect(await bind(split)).toEqual({ ok: true, message: "bound to n1" });
    const pod = kube.pod("team-a", k8s("p-0"))!;
    expect(pod.metadata.annotations["fleetq.io/gpu-devices"]).toBe("4,5,6,7");
    // The pinning among the containers' environment (the rendezvous variables come first).
    const pinned = (env: { name: string }[]) => env.filter((e) => e.name === "NVIDIA_VISIBLE_DEVICES");
    const env = (name: string) =>
      pinned(pod.spec.containers.find((c: { name: string }) => c.name === name).env);
    expect(env("a")).toEqual([{ name: "NVIDIA_VISIBLE_DEVICES", value: "4,5" }]);
    expect(env("b")).toEqual([{ name: "NVIDIA_VISIBLE_DEVICES", value: "6,7" }]);
    expect(env("log")).toEqual([{ name: "NVIDIA_VISIBLE_DEVICES", value: "void" }]); // asks for no GPU: sees none

    // Counts that do not add up to the pod's devices: each GPU container sees all of them.
    const whole = shape({
      id: "br-2",
      pod: "p-1",
      node: "n1",
      gpus: 2,
      gpuDevices: [0, 1],
      template: { spec: { containers: [container("main", "1")] } },
    });
    await bind(whole);
    expect(pinned(kube.pod("team-a", k8s("p-1"))!.spec.containers[0].env)).toEqual([
      { name: "NVIDIA_VISIBLE_DEVICES", value: "0,1" },
    ]);
    // No devices chosen: nothing pinned.
    await bind({ id: "br-3", pod: "p-2", node: "n1", gpus: 1 });
    expect(kube.pod("team-a", k8s("p-2"))!.metadata.annotations["fleetq.io/gpu-devices"]).toBeUndefined();
  });

  it("answers a repeated or conflicting bind truthfully without creating or binding again", async () => {
    await bind({ id: "br-1", pod: "p-0", node: "n1" });
    expect(await bind({ id: "br-1", pod: "p-0", node: "n1" })).toEqual({
      ok: true,
      message: "already bound to n1",
    });
    const elsewhere = await bind({ id: "br-2", pod: "p-0", node: "n2" });
    expect(elsewhere).toEqual({ ok: false, message: "the pod is already bound to n1, not n2" });
    expect(kube.count("POST", CREATE, 201)).toBe(1);
    expect(kube.count("POST", BINDING, 201)).toBe(1);
  });

  it("reports a pod gone naming the newest bind it answered on the pod's node, not a late repeat of an older one", async () => {
    await bind({ id: "br-1", pod: "p-0", node: "n1" });
    await until(() => expect(events.statesOf("p-0")).toEqual(["RUNNING"]));
    // The control plane bound the pod anew where it runs (br-3); br-1 comes again late.
    expect(await bind({ id: "br-3", pod: "p-0", node: "n1" })).toEqual({
      ok: true,
      message: "already bound to n1",
    });
    expect(await bind({ id: "br-1", pod: "p-0", node: "n1" })).toEqual({
      ok: true,
      message: "already bound to n1",
    });
    const evict = bindRequest({ id: "br-4", kind: "evict", pod: "p-0", node: "n1", reason: "reclaim" });
    expect(await backend.evict(evict)).toEqual({ ok: true, message: "evicted from n1" });
    await until(() => expect(events.statesOf("p-0")).toEqual(["RUNNING", "RELEASING", "PENDING"]));
    expect(events.states.at(-1)).toMatchObject({ pod: "p-0", state: "PENDING", bindRequest: "br-3" });
  });

  it("keeps the adopted bind on the pod: an agent started again reports the pod gone under it", async () => {
    await bind({ id: "br-1", pod: "p-0", node: "n1" });
    await until(() => expect(events.statesOf("p-0")).toEqual(["RUNNING"]));
    expect(await bind({ id: "br-3", pod: "p-0", node: "n1" })).toEqual({
      ok: true,
      message: "already bound to n1",
    });
    const annotations = () =>
      (kube.pod("team-a", k8s("p-0"))?.metadata.annotations ?? {}) as Record<string, string>;
    expect(annotations()[BIND_REQUEST_KEY]).toBe("br-3");
    // A late repeat of the older bind leaves the newer one on the pod.
    await bind({ id: "br-1", pod: "p-0", node: "n1" });
    expect(annotations()[BIND_REQUEST_KEY]).toBe("br-3");

    // The agent restarts; then the pod goes away (deleted by someone else): the report names br-3,
    // the bind the books hold the pod's run by, so they see it gone.
    await backend.stop();
    await startBackend();
    await until(() => expect(events.statesOf("p-0")).toEqual(["RUNNING"]));
    kube.deletePod("team-a", k8s("p-0"));
    await until(() => expect(events.statesOf("p-0")).toEqual(["RUNNING", "PENDING"]));
    expect(events.states.at(-1)).toMatchObject({ pod: "p-0", state: "PENDING", bindRequest: "br-3" });
  });

  it("runs two jobs with the same task names in one namespace, and a re-run after a finished one", async () => {
    const first = "0190a1b2-c3d4-7e5f-8a9b-111111111111";
    const second = "0190a1b2-c3d4-7e5f-8a9b-222222222222";
    const rerun = "0190a1b2-c3d4-7e5f-8a9b-333333333333";
    const request = (id: string, jobId: string) =>
      bindRequest({ id, jobId, jobName: "llm-finetune", pod: "worker-0", node: "n1" });
    expect(
      await backend.bind(request("br-1", first), renderJobFor(request("br-1", first), CONTAINER_TEMPLATE)),
    ).toEqual({
      ok: true,
      message: "bound to n1",
    });
    expect(
      await backend.bind(request("br-2", second), renderJobFor(request("br-2", second), CONTAINER_TEMPLATE)),
    ).toEqual({
      ok: true,
      message: "bound to n1",
    });
    const names = [first, second].map((job) => k8s("worker-0", job, "llm-finetune"));
    expect(names[0]).not.toBe(names[1]);
    for (const [i, job] of [first, second].entries()) {
      const pod = kube.pod("team-a", names[i]!)!;
      expect(pod.metadata.name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
      expect(pod.metadata.name.length).toBeLessThanOrEqual(63);
      expect(pod.metadata.labels["fleetq.io/job-id"]).toBe(job);
    }
    // Both report under the control plane's pod name, each for its own job.
    await until(() =>
      expect(events.states.filter((s) => s.state === "RUNNING")).toEqual([
        { jobId: first, pod: "worker-0", state: "RUNNING", bindRequest: "br-1" },
        { jobId: second, pod: "worker-0", state: "RUNNING", bindRequest: "br-2" },
      ]),
    );
    kube.setPodPhase("team-a", names[0]!, "Succeeded");
    await until(() => expect(events.statesOf("worker-0")).toContain("SUCCEEDED"));
    expect(
      await backend.bind(request("br-3", rerun), renderJobFor(request("br-3", rerun), CONTAINER_TEMPLATE)),
    ).toEqual({
      ok: true,
      message: "bound to n1",
    });
    expect(kube.pod("team-a", k8s("worker-0", rerun, "llm-finetune"))?.spec.nodeName).toBe("n1");
  });

  it("never adopts a pod of that name that belongs to another job or to no job", async () => {
    const container = { name: "c", image: "x" };
    kube.createPod({
      metadata: { name: k8s("p-0"), namespace: "team-a", labels: { "fleetq.io/job-id": "job-7" } },
      spec: { schedulerName: "fleetq", containers: [container] },
    });
    const foreign = await bind({ id: "br-1", pod: "p-0", node: "n1" });
    expect(foreign.ok).toBe(false);
    expect(foreign.message).toContain("not a pod of job job-1");
    // A user's pod waiting for fleetq is adopted only by the job made of that pod group.
    kube.createPod({
      metadata: { name: k8s("p-1"), namespace: "team-a", annotations: { "fleetq.io/pod-group": "g" } },
      spec: { schedulerName: "fleetq", containers: [container] },
    });
    const users = await bind({ id: "br-2", pod: "p-1", node: "n1" });
    expect(users.ok).toBe(false);
    expect(kube.count("POST", BINDING)).toBe(0);
  });

  it("deletes the finished pods it created after their time, and never users' pods", async () => {
    const reaping = new KubernetesBackend({
      cluster: "c1",
      kubeConfig: kube.kubeConfig(),
      defaultNamespace: "default",
      log,
      groupDebounceMs: 20,
      finishedPodTtlMs: 300,
    });
    await backend.stop();
    backend = reaping;
    await backend.start(events);
    await bind({ id: "br-1", pod: "done-0", node: "n1" });
    await bind({ id: "br-2", pod: "failed-0", node: "n1" });
    await bind({ id: "br-3", pod: "running-0", node: "n1" });
    kube.createPod({
      metadata: { name: "mine", namespace: "ml", annotations: { "fleetq.io/pod-group": "g" } },
      spec: { schedulerName: "fleetq", containers: [{ name: "c", image: "x" }] },
    });
    const mine = bindRequest({
      id: "br-4",
      jobId: "job-9",
      namespace: "ml",
      createdInCluster: true,
      pod: "mine",
      node: "n2",
    });
    expect(await backend.bind(mine, null)).toEqual({ ok: true, message: "bound to n2" });
    kube.setPodPhase("team-a", k8s("done-0"), "Succeeded");
    // Finished an hour ago (the kubelet's record says so): due at once.
    kube.setPodPhase("team-a", k8s("failed-0"), "Failed", "Error", new Date(Date.now() - 3_600_000));
    kube.setPodPhase("ml", "mine", "Succeeded");
    await until(() => expect(kube.effects).toContain(`delete team-a/${k8s("failed-0")}`));
    await until(() => expect(kube.pod("team-a", k8s("done-0"))).toBeUndefined());
    expect(kube.pod("team-a", k8s("running-0"))).toBeDefined();
    expect(kube.pod("ml", "mine")).toBeDefined();
    expect(kube.effects.filter((e) => e.startsWith("delete"))).toHaveLength(2);
    // Finished pods deleted are not reported again (their state was final).
    expect(events.statesOf("done-0")).toEqual(["RUNNING", "SUCCEEDED"]);
  });

  it("binds a pod a previous attempt created but did not bind", async () => {
    // A crashed attempt's leftover: created from the template, never bound.
    kube.hold("POST", BINDING).release("drop");
    const dropped = bind({ id: "br-1", pod: "p-0", node: "n1" });
    // The dropped connection is a network error: retried, and the retry binds.
    expect(await dropped).toEqual({ ok: true, message: "bound to n1" });
    expect(kube.count("POST", CREATE, 201)).toBe(1);
    expect(kube.count("POST", BINDING, 201)).toBe(1);

    // Left by an agent that stopped between creating and binding it: the pod it would create.
    const leftover = bindRequest({ id: "br-2", pod: "p-1", node: "n2" });
    kube.createPod(podManifest(leftover, renderJobFor(leftover, CONTAINER_TEMPLATE)));
    expect(await bind({ id: "br-2", pod: "p-1", node: "n2" })).toEqual({
      ok: true,
      message: "bound to n2",
    });
    expect(kube.count("POST", CREATE, 409)).toBe(1);
    expect(kube.pod("team-a", k8s("p-1"))?.spec.nodeName).toBe("n2");
  });

  it("refuses binds to unknown nodes and templates that cannot make a pod", async () => {
    expect(await bind({ id: "a", pod: "p-0", node: "n9" })).toEqual({
      ok: false,
      message: "node n9 is not in the cluster",
    });
    const noTemplate = await bind({ id: "b", pod: "p-1", node: "n1", template: null });
    expect(noTemplate.ok).toBe(false);
    expect(noTemplate.message).toContain("has no pod template");
    const noContainers = await bind({ id: "c", pod: "p-2", node: "n1", template: { spec: {} } });
    expect(noContainers.message).toContain("has no containers");
    expect(kube.count("POST", CREATE)).toBe(0);
  });

  it("retries pod creation and binding through 429 and 500", async () => {
    kube.injectFault({ method: "POST", path: CREATE, status: 429, times: 2, retryAfterSeconds: 0 });
    kube.injectFault({ method: "POST", path: BINDING, status: 500, times: 1 });
    expect(await bind({ id: "br-1", pod: "p-0", node: "n1" })).toEqual({
      ok: true,
      message: "bound to n1",
    });
    expect(kube.count("POST", CREATE, 429)).toBe(2);
    expect(kube.count("POST", BINDING, 500)).toBe(1);
    expect(kube.count("POST", CREATE, 201)).toBe(1);
    expect(kube.count("POST", BINDING, 201)).toBe(1);
  });

  it("evicts through the Eviction API, reports the pod Pending naming its bind, and answers a late eviction ok", async () => {
    await bind({ id: "br-1", pod: "p-0", node: "n1" });
    await until(() => expect(events.statesOf("p-0")).toEqual(["RUNNING"]));
    // A disruption budget (429) and a server error hold it up; both are retried.
    kube.injectFault({ method: "POST", path: EVICTION, status: 429, times: 1, retryAfterSeconds: 0 });
    kube.injectFault({ method: "POST", path: EVICTION, status: 500, times: 1 });

    const evict = bindRequest({ id: "br-2", kind: "evict", pod: "p-0", node: "n1", reason: "reclaim" });
    expect(await backend.evict(evict)).toEqual({ ok: true, message: "evicted from n1" });
    expect(kube.pod("team-a", k8s("p-0"))).toBeUndefined();
    expect(kube.count("POST", EVICTION, 201)).toBe(1);
    await until(() => expect(events.statesOf("p-0")).toEqual(["RUNNING", "RELEASING", "PENDING"]));
    // The report that the pod is gone names the bind whose run it ends (the pod's annotation).
    expect(events.states.at(-1)).toMatchObject({ pod: "p-0", state: "PENDING", bindRequest: "br-1" });

    expect(await backend.evict(evict)).toEqual({ ok: true, message: "the pod is already gone" });
    expect(kube.count("POST", EVICTION, 201)).toBe(1);
  });

  it("leaves a run bound after the eviction was decided, also after a restart (the bind's generation is on the pod)", async () => {
    await bind({ id: "br-1", pod: "p-0", node: "n1", generation: 3 });
    await until(() => expect(events.statesOf("p-0")).toEqual(["RUNNING"]));
    await bind({ id: "br-5", pod: "p-0", node: "n1", generation: 9 }); // bound again where it runs
    const annotations = () =>
      (kube.pod("team-a", k8s("p-0"))?.metadata.annotations ?? {}) as Record<string, string>;
    expect(annotations()[BIND_GENERATION_KEY]).toBe("9");
    // A late repeat of the older bind leaves the newer generation on the pod.
    await bind({ id: "br-1", pod: "p-0", node: "n1", generation: 3 });
    expect(annotations()[BIND_GENERATION_KEY]).toBe("9");

    await backend.stop();
    await startBackend(); // an agent started again knows no order of the pod's requests
    const evict = (id: string, generation: number) =>
      backend.evict(bindRequest({ id, kind: "evict", pod: "p-0", node: "n1", generation }));
    expect(await evict("br-4", 7)).toEqual({
      ok: true,
      message:
        "superseded: pod p-0 was bound again (generation 9) after this eviction was decided (generation 7)",
    });
    expect(kube.pod("team-a", k8s("p-0"))).toBeDefined();
    expect(kube.count("POST", EVICTION)).toBe(0);
    expect(await evict("br-6", 10)).toEqual({ ok: true, message: "evicted from n1" });
    expect(kube.pod("team-a", k8s("p-0"))).toBeUndefined();
  });

  it("evicts a pod of the job created under the control plane's name (before pods were named per job), never another job's", async () => {
    const earlier = (name: string, jobId: string) =>
      kube.createPod({
        metadata: {
          name,
          namespace: "team-a",
          labels: { "fleetq.io/job-id": jobId },
          annotations: { "fleetq.io/job-id": jobId },
        },
        spec: { schedulerName: "fleetq", nodeName: "n1", containers: [{ name: "c", image: "x" }] },
      });
    earlier("p-0", "job-1");
    earlier("p-1", "job-7");
    const evict = (pod: string) => backend.evict(bindRequest({ id: pod, kind: "evict", pod, node: "n1" }));
    expect(await evict("p-0")).toEqual({ ok: true, message: "evicted from n1" });
    expect(kube.pod("team-a", "p-0")).toBeUndefined();
    expect(await evict("p-1")).toEqual({ ok: true, message: "the pod is already gone" });
    expect(kube.pod("team-a", "p-1")).toBeDefined();
  });

  it("does not evict a later incarnation of the pod on another node", async () => {
    await bind({ id: "br-1", pod: "p-0", node: "n2" });
    const late = await backend.evict(bindRequest({ id: "old", kind: "evict", pod: "p-0", node: "n1" }));
    expect(late).toEqual({ ok: true, message: "the pod evicted from n1 is already gone" });
    expect(kube.pod("team-a", k8s("p-0"))?.spec.nodeName).toBe("n2");
    expect(kube.count("POST", EVICTION)).toBe(0);
  });

  it("reports phases from the watch once each, across a dropped watch and a relist", async () => {
    await bind({ id: "a", pod: "ok-0", node: "n1" });
    await bind({ id: "b", pod: "bad-0", node: "n2" });
    await until(() => expect(events.statesOf("bad-0")).toEqual(["RUNNING"]));
    kube.dropWatches();
    kube.setPodPhase("team-a", k8s("ok-0"), "Succeeded");
    await until(() => expect(events.statesOf("ok-0")).toEqual(["RUNNING", "SUCCEEDED"]));
    kube.dropWatches();
    kube.setPodPhase("team-a", k8s("bad-0"), "Failed", "OOMKilled");
    kube.store.compact();
    await until(() => expect(events.statesOf("bad-0")).toEqual(["RUNNING", "FAILED"]));
    expect(backend.lists.pods).toBe(2);
    expect(events.states.find((s) => s.pod === "bad-0" && s.state === "FAILED")).toEqual({
      jobId: "job-1",
      pod: "bad-0",
      state: "FAILED",
      message: "OOMKilled",
      exitCode: 1,
      bindRequest: "b",
    });
    // The relist repeated nothing already reported.
    expect(events.statesOf("ok-0")).toEqual(["RUNNING", "SUCCEEDED"]);
  });

  it("reports pods users created with our scheduler name and a pod group as a group, then follows them", async () => {
    const userPod = (name: string) => ({
      metadata: {
        name,
        namespace: "ml",
        labels: { "fleetq.io/queue": "research" },
        annotations: { "fleetq.io/pod-group": "sweep", "fleetq.io/min-member": "2" },
      },
      spec: {
        schedulerName: "fleetq",
        nodeSelector: { "nvidia.com/gpu.product": "NVIDIA-H100" },
        containers: [
          {
            name: "c",
            image: "x",
            resources: { limits: { "nvidia.com/gpu": "2", cpu: "4", memory: "8Gi" } },
          },
        ],
      },
    });
    kube.createPod(userPod("sweep-0"));
    kube.createPod(userPod("sweep-1"));
    // Not ours: another scheduler.
    kube.createPod({
      metadata: { name: "web", namespace: "ml" },
      spec: { containers: [{ name: "c", image: "x" }] },
    });

    await until(() => expect(events.groups.at(-1)?.pods).toHaveLength(2));
    const group = events.groups.at(-1)!;
    expect(group).toMatchObject({ namespace: "ml", name: "sweep", queue: "research", minMember: 2 });
    expect(group.pods.find((p) => p.name === "sweep-0")).toEqual({
      name: "sweep-0",
      uid: kube.pod("ml", "sweep-0")!.metadata.uid,
      resources: { cpuMillis: 4000, memory: 8 * 2 ** 30, gpus: 2, gpuMemory: 0 },
      gpuModel: "NVIDIA-H100",
      nodeSelector: { "nvidia.com/gpu.product": "NVIDIA-H100" },
    });

    // The control plane made it job-9 and placed sweep-0: the existing pod is bound, not recreated.
    const request = bindRequest({
      id: "br-9",
      jobId: "job-9",
      jobName: "sweep",
      namespace: "ml",
      createdInCluster: true,
      pod: "sweep-0",
      node: "n1",
      gpus: 2,
      gpuDevices: [2, 3],
    });
    expect(await backend.bind(request, null)).toEqual({
      ok: true,
      message: "bound to n1",
    });
    expect(kube.pod("ml", "sweep-0")?.metadata.annotations["fleetq.io/job-id"]).toBe("job-9");
    // The user's pod learns its devices from the Binding's annotations; its spec stays the user's.
    expect(kube.pod("ml", "sweep-0")?.metadata.annotations["fleetq.io/gpu-devices"]).toBe("2,3");
    expect(kube.pod("ml", "sweep-0")?.spec.containers[0].env).toBeUndefined();
    await until(() => expect(events.statesOf("sweep-0")).toEqual(["RUNNING"]));
    expect(events.states.find((s) => s.pod === "sweep-0")?.jobId).toBe("job-9");
    const reportsBefore = events.groups.length;

    kube.store.remove("pods", "ml/sweep-1");
    await until(() => expect(events.groups.length).toBeGreaterThan(reportsBefore));
    expect(events.groups.at(-1)?.pods.map((p) => p.name)).toEqual(["sweep-0"]);
  });
});
