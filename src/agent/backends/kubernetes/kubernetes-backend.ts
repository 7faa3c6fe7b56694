// The Kubernetes backend: Nodes and our pods are watched (list + watch, resume, relist on
// 410); a bind creates the job's pod and posts its Binding; an evict goes through the
// Eviction API; finished pods fleetq created are deleted after a while. Every step first
// looks at what is already there, so a repeated or late request does no harm and is
// answered truthfully.
import {
  CoreV1Api,
  CustomObjectsApi,
  Watch,
  type KubeConfig,
  type V1Node,
  type V1Pod,
} from "@kubernetes/client-node";
import type { Logger } from "pino";
import type { BindRequestMessage } from "../../../protocol/bind-request.js";
import { DEFAULT_BACKOFF } from "../../backoff.js";
import {
  BIND_GENERATION_KEY,
  BIND_REQUEST_KEY,
  JOB_ID_KEY,
  SCHEDULER_NAME,
} from "../../../protocol/labels.js";
import { supersededEviction } from "../superseded-eviction.js";
import { StartedBinds } from "../../started-binds.js";
import type { BackendEvents, ClusterBackend, LogQuery, LogSink, RequestOutcome } from "../types.js";
import { readPodLogs } from "./pod-logs.js";
import { DEFAULT_FINISHED_POD_TTL_MS, FinishedPodReaper } from "./finished-pods.js";
import { httpStatus, statusMessage } from "./kube-errors.js";
import { withKubeRetry, type KubeRetryPolicy } from "./kube-retry.js";
import { ListWatch } from "./list-watch.js";
import { nodeInventory } from "./node-inventory.js";
import { podBinding, podManifest } from "./pod-manifest.js";
import { clusterPodName, type RenderJob } from "../../../render/index.js";
import { JobServices } from "./job-services.js";
import { KubeWorkloads } from "./workloads.js";
import { podGroupName, podJobId } from "./pod-state.js";
import { PodTracker } from "./pod-tracker.js";
import { AgentSeals, SEAL_KEY } from "./agent-seal.js";
import { podDifferences } from "./pod-match.js";

export interface KubernetesBackendOptions {
  cluster: string;
  kubeConfig: KubeConfig;
  /** Namespace for jobs that name none. */
  defaultNamespace: string;
  log: Logger;
  /** How long one bind or evict keeps retrying a throttled or failing API server. */
  requestDeadlineMs?: number;
  groupDebounceMs?: number;
  /** Items per page of a list (large clusters are listed in pages). */
  listPageSize?: number;
  /** How long a finished pod fleetq created stays before it is deleted (default 1 h; 0 = keep). */
  finishedPodTtlMs?: number;
  /** Upgrading from an agent without seals: the bound pods of fleetq jobs of the first list are
   * taken as this agent's and sealed (a tenant's look-alike among them too: use once, knowingly). */
  adoptUnsealedPods?: boolean;
}

const FIELD_SELECTOR = `spec.schedulerName=${SCHEDULER_NAME}`;
/** How long a bind waits for a workload's controller to make the pod it places. */
const WORKLOAD_POD_WAIT_MS = 10_000;

export class KubernetesBackend implements ClusterBackend {
  readonly kind = "kubernetes";
  readonly defaultConcurrency = 64;
  readonly rendersPods = true;
  private readonly api: CoreV1Api;
  private readonly watch: Watch;
  private readonly retry: KubeRetryPolicy;
  private readonly log: Logger;
  private readonly nodeNames = new Set<string>();
  private nodeWatch: ListWatch<V1Node> | null = null;
  private podWatch: ListWatch<V1Pod> | null = null;
  private tracker: PodTracker | null = null;
  private readonly reaper: FinishedPodReaper;
  private readonly binds = new StartedBinds();
  private readonly services: JobServices;
  private readonly workloads: KubeWorkloads;
  /** Which pods and workload objects are this agent's (look-alikes are ignored). */
  private readonly seals = new AgentSeals();

  constructor(private readonly options: KubernetesBackendOptions) {
    this.api = options.kubeConfig.makeApiClient(CoreV1Api);
    this.watch = new Watch(options.kubeConfig);
    this.retry = { deadlineMs: options.requestDeadlineMs ?? 60_000, backoff: DEFAULT_BACKOFF };
    this.log = options.log;
    this.services = new JobServices(this.api, (what, fn) => this.call(what, fn));
    this.workloads = new KubeWorkloads(
      options.kubeConfig.makeApiClient(CustomObjectsApi),
      (what, fn) => this.call(what, fn),
      options.log,
      this.seals,
      () => this.tracker?.reconsider(),
    );
    this.reaper = new FinishedPodReaper(
      options.finishedPodTtlMs ?? DEFAULT_FINISHED_POD_TTL_MS,
      async (namespace, name, uid) => {
        await this.call(`delete ${name}`, () =>
          this.api.deleteNamespacedPod({ name, namespace, body: { preconditions: { uid } } }),
        );
      },
      options.log,
    );
  }

  useKey(hexKey: string): void {
    this.seals.useKey(hexKey);
  }

  /** Pods of fleetq jobs ignored because this agent cannot prove them its own (look-alikes). */
  get ignoredPods(): number {
    return this.tracker?.ignored ?? 0;
  }

  async start(events: BackendEvents): Promise<void> {
    const log = this.log;
    this.nodeWatch = new ListWatch<V1Node>({
      name: "nodes",
      path: "/api/v1/nodes",
      watch: this.watch,
      list: () => this.listAll((page) => this.api.listNode(page)),
      onList: (nodes) => {
        this.nodeNames.clear();
        for (const node of nodes) this.nodeNames.add(node.metadata?.name ?? "");
        events.nodes(nodes.map(nodeInventory), true, []);
      },
      onEvent: (type, node) => {
        const name = node.metadata?.name ?? "";
        if (type === "DELETED") {
          this.nodeNames.delete(name);
          events.nodes([], false, [name]);
        } else {
          this.nodeNames.add(name);
          events.nodes([nodeInventory(node)], false, []);
        }
      },
      backoff: DEFAULT_BACKOFF,
      log,
    });
    const tracker = new PodTracker(
      {
        podStates: (changes) => events.podStates(changes),
        externalPodGroups: (groups) => events.externalPodGroups?.(groups),
        finished: (pod) => this.reaper.finished(pod),
      },
      this.options.groupDebounceMs ?? 200,
      {
        owns: (pod) => this.seals.ownsPod(pod) || this.workloads.ownsPod(pod),
        gone: (pod) => this.seals.forget(pod.metadata?.uid),
        log,
      },
    );
    this.tracker = tracker;
    let listStartedAt = 0;
    let adoptedOnce = false;
    this.podWatch = new ListWatch<V1Pod>({
      name: "pods",
      path: "/api/v1/pods",
      query: { fieldSelector: FIELD_SELECTOR },
      watch: this.watch,
      list: () => {
        listStartedAt = performance.now();
        return this.listAll((page) =>
          this.api.listPodForAllNamespaces({ fieldSelector: FIELD_SELECTOR, ...page }),
        );
      },
      onList: (pods) => {
        if (this.options.adoptUnsealedPods && !adoptedOnce) {
          adoptedOnce = true;
          this.adoptUnsealed(pods);
        }
        tracker.onList(pods);
        // The list is complete: the pods it has, and those whose bind began while it ran.
        const since = listStartedAt;
        events.podInventory?.({
          pods: () => [...tracker.present(), ...this.binds.since(since)],
          bindsSince: (at) => this.binds.since(at),
        });
      },
      onEvent: (type, pod) => tracker.onEvent(type, pod),
      backoff: DEFAULT_BACKOFF,
      log,
    });
    await Promise.all([this.nodeWatch.start(), this.podWatch.start()]);
    this.workloads.watch(this.watch, (changes) => events.workloadStatus?.(changes));
  }

  /** Relists so far per watch (nodes, pods): visible for tests and diagnostics. */
  get lists(): { nodes: number; pods: number } {
    return { nodes: this.nodeWatch?.lists ?? 0, pods: this.podWatch?.lists ?? 0 };
  }

  async bind(request: BindRequestMessage, rendered: RenderJob | null = null): Promise<RequestOutcome> {
    const namespace = request.job.namespace || this.options.defaultNamespace;
    const job = rendered && { ...rendered, namespace };
    const name = clusterPodName(request);
    this.binds.add({ jobId: request.job.id, pod: request.pod.name });
    if (!this.nodeNames.has(request.node)) {
      return { ok: false, message: `node ${request.node} is not in the cluster` };
    }
    if (job?.workload) return this.bindWorkloadPod(request, job, namespace);
    let pod: V1Pod;
    try {
      pod = await this.createOrFindPod(request, job, namespace, name);
    } catch (err) {
      return { ok: false, message: `cannot create pod ${namespace}/${name}: ${statusMessage(err)}` };
    }
    const refusal = this.refuseForeignPod(pod, request, this.manifestOf(request, job));
    if (refusal) return refusal;
    if (job) {
      try {
        await this.services.ensure(job, pod);
      } catch (err) {
        return { ok: false, message: `cannot create the Service of job ${job.name}: ${statusMessage(err)}` };
      }
    }
    return this.bindPod(pod, request, namespace);
  }

  /** A pod of a workload: its object is created first (once), then the pod its controller made for
   * the request's place is bound. A controller slower than a few seconds fails the bind: the pod
   * is placed again by a later cycle. */
  private async bindWorkloadPod(request: BindRequestMessage, job: RenderJob, namespace: string) {
    const workload = job.workload!;
    try {
      await this.workloads.ensure(job, namespace);
    } catch (err) {
      return {
        ok: false,
        message: `cannot create ${workload.kind} ${namespace}/${workload.name}: ${statusMessage(err)}`,
      };
    }
    const name = await this.tracker?.waitForPlace(request.job.id, request.pod.name, WORKLOAD_POD_WAIT_MS);
    if (!name)
      return {
        ok: false,
        message: `the controller of ${workload.kind} ${workload.name} has made no pod for ${request.pod.name} yet`,
      };
    let pod: V1Pod;
    try {
      pod = await this.readPod(namespace, name);
    } catch (err) {
      return { ok: false, message: `cannot read pod ${namespace}/${name}: ${statusMessage(err)}` };
    }
    return this.bindPod(pod, request, namespace);
  }

  /** Binds the pod to the request's node, or answers for it where it is already placed. */
  private async bindPod(pod: V1Pod, request: BindRequestMessage, namespace: string): Promise<RequestOutcome> {
    const name = pod.metadata?.name ?? "";
    const placed = placedOutcome(pod, request.node);
    if (placed) return this.adopted(pod, request, placed);
    try {
      await this.call(`bind ${name}`, () =>
        this.api.createNamespacedPodBinding({
          name,
          namespace,
          body: this.sealedBinding(pod, request, namespace),
        }),
      );
      this.seals.record(pod.metadata?.uid);
      return { ok: true, message: `bound to ${request.node}` };
    } catch (err) {
      const status = httpStatus(err);
      if (status === 404)
        return { ok: false, message: `pod ${namespace}/${name} was deleted before it was bound` };
      if (status !== 409)
        return { ok: false, message: `binding ${namespace}/${name} failed: ${statusMessage(err)}` };
      // 409: someone (a retry of ours, or another actor) bound it first: say where.
      const now = await this.readPod(namespace, name).catch(() => null);
      const placedNow = now && placedOutcome(now, request.node);
      return placedNow
        ? this.adopted(now, request, placedNow)
        : { ok: false, message: `binding conflict: ${statusMessage(err)}` };
    }
  }

  async evict(request: BindRequestMessage): Promise<RequestOutcome> {
    const namespace = request.job.namespace || this.options.defaultNamespace;
    let found: { pod: V1Pod; name: string } | null;
    try {
      found = await this.podToEvict(namespace, request);
    } catch (err) {
      const name = clusterPodName(request);
      return { ok: false, message: `cannot read pod ${namespace}/${name}: ${statusMessage(err)}` };
    }
    if (!found) return { ok: true, message: "the pod is already gone" };
    const { pod, name } = found;
    const jobId = podJobId(pod);
    if (pod.spec?.nodeName !== request.node || (jobId !== null && jobId !== request.job.id)) {
      // A later incarnation of the pod (re-placed elsewhere, or another job's): not ours to evict.
      return { ok: true, message: `the pod evicted from ${request.node} is already gone` };
    }
    if (pod.metadata?.deletionTimestamp) return { ok: true, message: "the pod is already terminating" };
    const stale = supersededEviction(request, bindGenerationOf(pod));
    if (stale) return stale;
    try {
      await this.call(`evict ${name}`, () =>
        this.api.createNamespacedPodEviction({
          name,
          namespace,
          body: { apiVersion: "policy/v1", kind: "Eviction", metadata: { name, namespace } },
        }),
      );
      return { ok: true, message: `evicted from ${request.node}` };
    } catch (err) {
      if (httpStatus(err) === 404) return { ok: true, message: "the pod is already gone" };
      return { ok: false, message: `eviction of ${namespace}/${name} failed: ${statusMessage(err)}` };
    }
  }

  readLogs(query: LogQuery, sink: LogSink, signal: AbortSignal): Promise<string> {
    const { kubeConfig, cluster, defaultNamespace } = this.options;
    // A workload's pod: the one its controller made for that place now.
    const placed = this.tracker?.placePod(query.job.id, query.pod) ?? undefined;
    return readPodLogs({ api: this.api, kubeConfig, cluster, defaultNamespace }, query, sink, signal, placed);
  }

  deleteWorkload(request: BindRequestMessage, job: RenderJob): Promise<RequestOutcome> {
    return this.workloads.delete(job, request.job.namespace || this.options.defaultNamespace);
  }

  async stop(): Promise<void> {
    this.tracker?.stop();
    await this.workloads.stop();
    this.reaper.stop();
    await Promise.all([this.nodeWatch?.stop(), this.podWatch?.stop()]);
  }

  private async createOrFindPod(
    request: BindRequestMessage,
    job: RenderJob | null,
    namespace: string,
    name: string,
  ): Promise<V1Pod> {
    let manifest: V1Pod | null = null;
    try {
      if (!job) throw new Error("the job's pods are not fleetq's to create");
      manifest = podManifest(request, job);
    } catch (err) {
      // Nothing to create from: fine if the pod exists already (created by a user for us).
      const existing = await this.readPod(namespace, name).catch(() => null);
      if (existing) return existing;
      throw err;
    }
    const body = manifest;
    try {
      const created = await this.call(`create ${name}`, () =>
        this.api.createNamespacedPod({ namespace, body }),
      );
      this.seals.record(created.metadata?.uid);
      return created;
    } catch (err) {
      if (httpStatus(err) !== 409) throw err;
      return this.readPod(namespace, name);
    }
  }

  /** The bound pods of fleetq jobs an agent without seals left: taken as this agent's, and sealed
   * (one patch each) so that the next start knows them too. */
  private adoptUnsealed(pods: V1Pod[]): void {
    const unsealed = pods.filter((p) => podJobId(p) && p.spec?.nodeName && !this.seals.ownsPod(p));
    for (const pod of unsealed) this.seals.record(pod.metadata?.uid);
    this.log.warn(
      { pods: unsealed.length },
      "adopting the bound pods of fleetq jobs found unsealed (adoptUnsealedPods)",
    );
    for (const pod of unsealed) void this.seal(pod);
  }

  private async seal(pod: V1Pod): Promise<void> {
    // Over its uid: should the pod have been replaced meanwhile, the seal fits no other.
    const { name = "", namespace = "", uid = "" } = pod.metadata ?? {};
    const body = [
      { op: "add", path: `/metadata/annotations/${jsonPointer(SEAL_KEY)}`, value: this.seals.podSeal(uid) },
    ];
    try {
      await this.call(`seal ${name}`, () => this.api.patchNamespacedPod({ name, namespace, body }));
    } catch (err) {
      this.log.warn(
        { pod: `${namespace}/${name}`, err: statusMessage(err) },
        "could not seal an adopted pod",
      );
    }
  }

  /** The Binding of `pod` (only that pod: its uid is the Binding's precondition), carrying the
   * agent's seal over that uid onto the pod. */
  private sealedBinding(pod: V1Pod, request: BindRequestMessage, namespace: string) {
    const uid = pod.metadata?.uid;
    const binding = podBinding(request, namespace, pod.metadata?.name ?? "");
    if (!uid) return binding;
    binding.metadata = {
      ...binding.metadata,
      uid,
      annotations: { ...binding.metadata?.annotations, [SEAL_KEY]: this.seals.podSeal(uid) },
    };
    return binding;
  }

  /** An existing pod of that name must be this job's, or (for a job made of pods users
   * created) a user's pod waiting for us. A pod of the job's that this agent cannot prove its own
   * is bound only if it is exactly the pod the agent would create. */
  private refuseForeignPod(
    pod: V1Pod,
    request: BindRequestMessage,
    manifest: V1Pod | null,
  ): RequestOutcome | null {
    const jobId = podJobId(pod) ?? pod.metadata?.labels?.[JOB_ID_KEY] ?? null;
    if (jobId === request.job.id && (this.seals.ownsPod(pod) || !manifest)) return null;
    if (jobId === request.job.id && manifest) {
      const differs = podDifferences(pod, manifest, request.node);
      if (differs.length === 0) return null;
      this.log.warn(
        { pod: `${pod.metadata?.namespace}/${pod.metadata?.name}`, job: request.job.id, differs },
        "refusing a pod made in advance under a job's pod name",
      );
      return {
        ok: false,
        message:
          `pod ${pod.metadata?.namespace}/${pod.metadata?.name} exists but was not created by fleetq for ` +
          `this job: its ${differs.join(", ")} differ from the job's; delete it and the pod is placed again`,
      };
    }
    const waiting = jobId === null && pod.spec?.schedulerName === SCHEDULER_NAME && podGroupName(pod);
    if (request.job.createdInCluster && waiting) return null;
    return {
      ok: false,
      message: `a pod named ${pod.metadata?.name} exists that is not a pod of job ${request.job.id}`,
    };
  }

  /** The pod the agent would create for the request (null: none, e.g. a pod users created). */
  private manifestOf(request: BindRequestMessage, job: RenderJob | null): V1Pod | null {
    if (!job || request.job.createdInCluster) return null;
    try {
      return podManifest(request, job);
    } catch {
      return null;
    }
  }

  /** The pod an eviction is for: under its name or, for a pod created before pods were named
   * per job, under the control plane's name if it is this job's; null when there is none. */
  private async podToEvict(
    namespace: string,
    request: BindRequestMessage,
  ): Promise<{ pod: V1Pod; name: string } | null> {
    const unlessGone = (err: unknown) => {
      if (httpStatus(err) === 404) return null;
      throw err;
    };
    const name = request.job.workload
      ? this.tracker?.placePod(request.job.id, request.pod.name)
      : clusterPodName(request);
    if (!name) return null;
    const pod = await this.readPod(namespace, name).catch(unlessGone);
    if (pod || request.job.createdInCluster || request.job.workload) return pod ? { pod, name } : null;
    const earlier = await this.readPod(namespace, request.pod.name).catch(unlessGone);
    return earlier && podJobId(earlier) === request.job.id ? { pod: earlier, name: request.pod.name } : null;
  }

  /** Every item of a collection, in pages of listPageSize (limit/continue); the list's
   * resourceVersion is the first page's, as the API server serves every page from it. */
  private async listAll<T>(
    fetchPage: (page: {
      limit: number;
      _continue?: string;
    }) => Promise<{ items: T[]; metadata?: { resourceVersion?: string; _continue?: string } }>,
  ): Promise<{ items: T[]; resourceVersion: string }> {
    const limit = this.options.listPageSize ?? 500;
    const first = await fetchPage({ limit });
    const items = [...first.items];
    let next = first.metadata?._continue;
    while (next) {
      const page = await fetchPage({ limit, _continue: next });
      items.push(...page.items);
      next = page.metadata?._continue;
    }
    return { items, resourceVersion: first.metadata?.resourceVersion ?? "" };
  }

  private readPod(namespace: string, name: string): Promise<V1Pod> {
    return this.call(`read ${name}`, () => this.api.readNamespacedPod({ name, namespace }));
  }

  /**
   * A bind answered ok by a pod already on its node: the books know the pod's run by this request
   * now, so a report that the run ended names it. The pod's bind-request annotation says so too
   * (annotations of a running pod may be patched): an agent started again reads the bind from
   * there, and a report naming the older one would be taken for a report of an earlier run. Its
   * bind-generation annotation moves with it: an eviction decided before this bind is stale.
   */
  private async adopted(
    pod: V1Pod,
    request: BindRequestMessage,
    outcome: RequestOutcome,
  ): Promise<RequestOutcome> {
    if (!outcome.ok) return outcome;
    this.tracker?.adopt(pod, request.id);
    const annotations = pod.metadata?.annotations;
    const current = annotations?.[BIND_REQUEST_KEY];
    if (current && current >= request.id) return outcome;
    const name = pod.metadata?.name ?? "";
    const namespace = pod.metadata?.namespace ?? "";
    const newer = {
      [BIND_REQUEST_KEY]: request.id,
      [BIND_GENERATION_KEY]: String(Math.max(request.generation, bindGenerationOf(pod) ?? 0)),
    };
    const body = annotations
      ? Object.entries(newer).map(([key, value]) => ({
          op: "add",
          path: `/metadata/annotations/${jsonPointer(key)}`,
          value,
        }))
      : [{ op: "add", path: "/metadata/annotations", value: newer }];
    try {
      await this.call(`annotate ${name}`, () => this.api.patchNamespacedPod({ name, namespace, body }));
    } catch (err) {
      // The pod runs as the bind asked: the bind stands. Only a restarted agent would name the
      // older bind in the report that the run ended.
      this.log.warn(
        { pod: `${namespace}/${name}`, bindRequest: request.id, err: statusMessage(err) },
        "could not record the adopted bind on the pod",
      );
    }
    return outcome;
  }

  private call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    return withKubeRetry(what, fn, this.retry, this.log);
  }
}

/** The cluster generation of the bind that started the pod's run (null: not recorded). */
function bindGenerationOf(pod: V1Pod): number | null {
  const value = Number(pod.metadata?.annotations?.[BIND_GENERATION_KEY] ?? Number.NaN);
  return Number.isSafeInteger(value) ? value : null;
}

/** The answer when the pod already has a node: ok on ours, a failure elsewhere. */
function placedOutcome(pod: V1Pod, node: string): RequestOutcome | null {
  const current = pod.spec?.nodeName;
  if (!current) {
    if (pod.metadata?.deletionTimestamp) return { ok: false, message: "the pod is being deleted" };
    return null;
  }
  return current === node
    ? { ok: true, message: `already bound to ${node}` }
    : { ok: false, message: `the pod is already bound to ${current}, not ${node}` };
}

/** A key as one JSON Pointer segment (RFC 6901). */
function jsonPointer(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}
