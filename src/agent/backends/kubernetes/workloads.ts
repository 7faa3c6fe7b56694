// Workloads on Kubernetes (a Job, JobSet, PyTorchJob, MPIJob submitted as a manifest): the agent
// creates the object once, with its job's first bind (src/workload's workloadObject: marked as
// the job's, its pod templates handed to fleetq's scheduler), deletes it when the job is
// cancelled, and watches the objects it created for what their status says (their end, a
// restart of their own). A kind whose API the cluster does not serve (its CRD not installed) is
// looked for again every minute, said once in the log.
import type { CustomObjectsApi, Watch } from "@kubernetes/client-node";
import type { Logger } from "pino";
import type { V1Pod } from "@kubernetes/client-node";
import { JOB_ID_KEY, WORKLOAD_KIND_KEY } from "../../../protocol/labels.js";
import { AgentSeals, SEAL_KEY } from "./agent-seal.js";
import type { RenderJob } from "../../../render/index.js";
import {
  KINDS,
  kindNamed,
  type WorkloadKindName,
  workloadObject,
  workloadOutcome,
} from "../../../workload/index.js";
import { DEFAULT_BACKOFF } from "../../backoff.js";
import { RecentSet } from "../../recent-set.js";
import type { RequestOutcome, WorkloadStatusChange } from "../types.js";
import { httpStatus, statusMessage } from "./kube-errors.js";
import { type KubeObject, ListWatch } from "./list-watch.js";

type Call = <T>(what: string, fn: () => Promise<T>) => Promise<T>;
type Json = Record<string, unknown>;

interface WorkloadObject extends KubeObject {
  metadata?: KubeObject["metadata"] & { annotations?: Record<string, string> };
  status?: Json;
}

export class KubeWorkloads {
  /** Jobs whose object this agent created or found (a gang's binds come together). */
  private readonly created = new RecentSet(10_000);
  private readonly watches: ListWatch<WorkloadObject>[] = [];
  /** What was last told of each job's object: its end, or its last restart. */
  private readonly told = new Map<string, string>();

  /** Job id → the objects of its workload this agent created (sealed), by uid. */
  private readonly owned = new Map<string, { namespace: string; name: string; uids: Set<string> }>();

  constructor(
    private readonly api: CustomObjectsApi,
    private readonly call: Call,
    private readonly log: Logger,
    private readonly seals: AgentSeals = new AgentSeals(),
    /** Called when an object of a job becomes known as the agent's (its pods may wait for it). */
    private readonly onOwned: () => void = () => {},
  ) {}

  /** A pod a workload's controller made: its job's object is one this agent created, in the
   * pod's namespace, and owns the pod (its controller reference), directly or through a Job the
   * object made (JobSet, an MPIJob's launcher: named after the object). Annotations alone are
   * anyone's to write. */
  ownsPod(pod: V1Pod): boolean {
    const jobId = pod.metadata?.annotations?.[JOB_ID_KEY];
    if (!jobId || !pod.metadata?.annotations?.[WORKLOAD_KIND_KEY]) return false;
    const object = this.owned.get(jobId);
    if (!object || object.namespace !== pod.metadata?.namespace) return false;
    const controller = (pod.metadata?.ownerReferences ?? []).find((o) => o.controller);
    if (!controller) return false;
    if (object.uids.has(controller.uid)) return true;
    return controller.kind === "Job" && controller.name.startsWith(`${object.name}-`);
  }

  private own(jobId: string, object: WorkloadObject): void {
    const { namespace = "", name = "", uid } = object.metadata ?? {};
    const entry = this.owned.get(jobId) ?? { namespace, name, uids: new Set<string>() };
    if (uid && entry.uids.has(uid)) return;
    if (uid) entry.uids.add(uid);
    this.owned.set(jobId, entry);
    if (this.owned.size > 10_000) this.owned.delete(this.owned.keys().next().value!);
    this.onOwned();
  }

  /** Creates the job's object in `namespace` unless it is there; throws when it cannot, or when
   * an object of that name belongs to another job. */
  async ensure(job: RenderJob, namespace: string): Promise<void> {
    const workload = job.workload!;
    if (this.created.has(job.id)) return;
    const { group, version, plural } = kindNamed(workload.kind as WorkloadKindName).resource;
    const body = workloadObject(
      { kind: workload.kind as WorkloadKindName, manifest: workload.manifest },
      { id: job.id, name: job.name, queue: job.queue, namespace },
    );
    const meta = body.metadata as { annotations: Record<string, string> };
    meta.annotations[SEAL_KEY] = this.seals.workloadSeal(workload.kind, namespace, workload.name, job.id);
    let object: WorkloadObject;
    try {
      object = (await this.call(`create ${workload.kind} ${workload.name}`, () =>
        this.api.createNamespacedCustomObject({ group, version, namespace, plural, body }),
      )) as WorkloadObject;
    } catch (err) {
      if (httpStatus(err) !== 409) throw err;
      object = (await this.call(`read ${workload.kind} ${workload.name}`, () =>
        this.api.getNamespacedCustomObject({ group, version, namespace, plural, name: workload.name }),
      )) as WorkloadObject;
      const owner = object.metadata?.annotations?.[JOB_ID_KEY];
      // Made by this agent before (it stopped before recording it): sealed. Anything else is not.
      if (owner !== job.id || !this.seals.ownsWorkload(workload.kind, object, job.id))
        throw new Error(
          `a ${workload.kind} named ${workload.name} exists in namespace ${namespace} that fleetq did not create for job ${job.id}${owner && owner !== job.id ? ` (it names job ${owner})` : ""}`,
        );
    }
    this.own(job.id, object);
    this.created.add(job.id);
  }

  /** Deletes the job's object with what it made (background propagation): only the object this
   * agent created (its uid the delete's precondition); an object of that name it cannot prove its
   * own is left alone. */
  async delete(job: RenderJob, namespace: string): Promise<RequestOutcome> {
    const workload = job.workload;
    if (!workload) return { ok: true, message: "the job has no workload" };
    const { group, version, plural } = kindNamed(workload.kind as WorkloadKindName).resource;
    const what = `${workload.kind} ${namespace}/${workload.name}`;
    try {
      const uid = await this.ownUid(job, namespace);
      if (!uid) return { ok: true, message: `${what} is not one fleetq created: left alone` };
      await this.call(`delete ${what}`, () =>
        this.api.deleteNamespacedCustomObject({
          group,
          version,
          namespace,
          plural,
          name: workload.name,
          propagationPolicy: "Background",
          body: { preconditions: { uid } },
        }),
      );
      return { ok: true, message: `${what} deleted` };
    } catch (err) {
      const status = httpStatus(err);
      if (status === 404) return { ok: true, message: `${workload.kind} ${workload.name} is already gone` };
      if (status === 409) return { ok: true, message: `${what} is another object now: left alone` };
      return {
        ok: false,
        message: `deleting ${workload.kind} ${workload.name} failed: ${statusMessage(err)}`,
      };
    }
  }

  /** The uid of the job's object this agent created: known, or read and its seal checked. */
  private async ownUid(job: RenderJob, namespace: string): Promise<string | null> {
    const workload = job.workload!;
    const known = this.owned.get(job.id);
    if (known?.namespace === namespace && known.name === workload.name && known.uids.size === 1)
      return [...known.uids][0]!;
    const { group, version, plural } = kindNamed(workload.kind as WorkloadKindName).resource;
    const object = (await this.call(`read ${workload.kind} ${workload.name}`, () =>
      this.api.getNamespacedCustomObject({ group, version, namespace, plural, name: workload.name }),
    )) as WorkloadObject;
    return this.seals.ownsWorkload(workload.kind, object, job.id) ? (object.metadata?.uid ?? null) : null;
  }

  /** Watches the objects fleetq created, of every kind the cluster serves. Does not wait. */
  watch(watch: Watch, report: (changes: WorkloadStatusChange[]) => void): void {
    for (const def of KINDS) {
      const { group, version, plural } = def.resource;
      const labelSelector = JOB_ID_KEY;
      let missing = false;
      const changed = (objects: WorkloadObject[]) => {
        const changes = objects.flatMap((o) => this.statusOf(def.kind, o));
        if (changes.length) report(changes);
      };
      const lw = new ListWatch<WorkloadObject>({
        name: plural,
        path: `/apis/${group}/${version}/${plural}`,
        query: { labelSelector },
        watch,
        list: async () => {
          try {
            const list = (await this.api.listClusterCustomObject({
              group,
              version,
              plural,
              labelSelector,
            })) as {
              items: WorkloadObject[];
              metadata?: { resourceVersion?: string };
            };
            missing = false;
            return { items: list.items, resourceVersion: list.metadata?.resourceVersion ?? "" };
          } catch (err) {
            if (httpStatus(err) === 404 && !missing) {
              missing = true;
              this.log.info(
                `the cluster serves no ${def.kind} (${group}/${version}): its workloads cannot run here`,
              );
            }
            throw err;
          }
        },
        onList: changed,
        onEvent: (type, object) => {
          if (type !== "DELETED") changed([object]);
        },
        // A kind the cluster does not serve is looked for again every minute.
        backoff: { ...DEFAULT_BACKOFF, maxMs: 60_000 },
        log: this.log,
      });
      this.watches.push(lw);
      void lw.start();
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.watches.map((w) => w.stop()));
  }

  /** What the object says that was not told yet: its end, or a restart of its own. */
  private statusOf(kind: WorkloadKindName, object: WorkloadObject): WorkloadStatusChange[] {
    const jobId = object.metadata?.annotations?.[JOB_ID_KEY];
    // Only what this agent created speaks for a job: a look-alike object's status is not heard.
    if (!jobId || !this.seals.ownsWorkload(kind, object, jobId)) return [];
    this.own(jobId, object);
    const outcome = workloadOutcome(kind, object as Json);
    const restarts = restartsOf(object.status ?? {});
    const key = outcome ? `end:${outcome.state}` : restarts ? `restarts:${restarts}` : "";
    if (!key || this.told.get(jobId) === key || this.told.get(jobId)?.startsWith("end:")) return [];
    this.told.set(jobId, key);
    if (this.told.size > 100_000) this.told.delete(this.told.keys().next().value!);
    if (outcome) return [{ jobId, ...outcome }];
    return [
      { jobId, state: "RUNNING", reason: "Restarting", message: `its controller restarted it (${restarts})` },
    ];
  }
}

/** How many times the object's controller ran it again: a JobSet's restarts, a Job's failed
 * pods (each retried up to its backoff limit), a training job's Restarting condition. */
function restartsOf(status: Json): string | null {
  if (typeof status.restarts === "number" && status.restarts > 0) return `${status.restarts} restart(s)`;
  if (typeof status.failed === "number" && status.failed > 0) return `${status.failed} failed pod(s) retried`;
  const conditions = Array.isArray(status.conditions) ? (status.conditions as Json[]) : [];
  const restarting = conditions.find((c) => c.type === "Restarting" && c.status === "True");
  return restarting ? `restarting since ${String(restarting.lastTransitionTime ?? "")}` : null;
}
