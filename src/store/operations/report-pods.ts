// Agent: pod phases on its cluster, and the results of the BindRequests it carried out.
// Both are idempotent: repeating a report changes nothing the second time.
import { z } from "zod";
import { holdsNodeState, keepsNodeName, TERMINAL_POD_STATES } from "../domain/pod-states.js";
import { NotFoundError } from "../errors.js";
import type { Tx } from "../db.js";
import type { BindRequestState, Job, JobHead, JobState, Pod, PodState } from "../types.js";
import type { RecordEvent } from "../events.js";
import { type Actor, type Store, transact } from "../store.js";
import { clusterName } from "../validation/names.js";
import { invalidAt, parseInput } from "../validation/parse.js";
import { createBindRequests, type NewBindRequest } from "./bind-request-rows.js";
import { bumpGeneration, lockCluster } from "./cluster-fence.js";
import { refreshJobs } from "./job-refresh.js";
import { applyGangFailures, type GangFailure } from "./gang-restarts.js";
import { type PodChange, writePodChanges } from "./pod-changes.js";

/** States an agent may report. BINDING and PIPELINED are the scheduler's to set. */
const REPORTABLE = ["PENDING", "RUNNING", "RELEASING", "SUCCEEDED", "FAILED"] as const;

const podStatusInput = z
  .object({
    cluster: clusterName,
    updates: z
      .array(
        z
          .object({
            job: z.uuid("not a job id"),
            pod: z.string().min(1, "pod must not be empty"),
            state: z.enum(REPORTABLE, `an agent reports one of ${REPORTABLE.join(", ")}`),
            message: z.string().max(2000).nullish(),
            /** The BIND request whose run the report is about (a report that the pod left its node). */
            bindRequest: z.uuid("not a BindRequest id").nullish(),
            /** The exit code the pod's run ended with (SUCCEEDED, FAILED). */
            exitCode: z.int("exitCode must be a whole number").nullish(),
            /** PENDING: a workload's controller made the pod again (its run before ended). */
            recreated: z.boolean().nullish(),
          })
          .strict(),
      )
      .max(10_000),
  })
  .strict();
export type ReportPodStatusInput = z.input<typeof podStatusInput>;

/**
 * A report names no node, so one that says a pod runs is taken where the books hold the pod.
 * The books hold a PENDING pod on no node and a PIPELINED one only nominated: a run reported
 * for either — running, releasing or finished — is one the books have seen end (an eviction
 * confirmed, a bind taken back, a gang restarted) reported late, and putting it on the nominated
 * node would book it onto what releasing pods still hold, or end a pod that is to run again. A
 * RELEASING pod reported running is still being evicted: it stays RELEASING.
 */
function staleRunReport(current: PodState, reported: PodState): boolean {
  if (current === "PENDING" || current === "PIPELINED") return reported !== "PENDING";
  return current === "RELEASING" && reported === "RUNNING";
}

/**
 * Applies pod phases. A finished pod stays finished (late reports are ignored); a pod reported
 * PENDING is off its node (evicted or lost) and waits to be placed again — unless its job was
 * cancelled or stopped (FAILED), then it ends FAILED, or it is BINDING with its bind still on its
 * way (the report is of an earlier run). A report naming a BIND request other than the pod's
 * latest is of an earlier run too and changes nothing. A pod the books hold on no node is not put
 * back on one by a report that it runs, and a releasing pod stays releasing (staleRunReport). A
 * releasing pod reported finished ended because it was evicted: it leaves its node as an
 * eviction's result says (offNodeChange), whatever its exit. A pod of a job with a restart policy
 * that fails, or leaves its node without being evicted, restarts or fails the gang (gang-restarts).
 * Returns how many pods changed.
 */
export async function reportPodStatus(
  store: Store,
  actor: Actor,
  input: ReportPodStatusInput,
): Promise<number> {
  const r = parseInput(podStatusInput, input);
  const now = new Date();
  return transact(store, actor, async (tx, record) => {
    if (!(await lockCluster(tx, r.cluster))) throw new NotFoundError("cluster", r.cluster, "cluster");
    const jobIds = [...new Set(r.updates.map((u) => u.job))];
    const jobs = new Map(
      (
        await tx.$queryRaw<(JobHead & { workload: boolean })[]>`
          SELECT id::text AS id, cluster_name AS "clusterName", state::text AS state, name, queue_name AS "queueName",
            workload IS NOT NULL AS workload
          FROM job WHERE id = ANY(${jobIds}::uuid[])`
      ).map((j) => [j.id, j]),
    );
    // Only the pods named (a report names a few pods of big jobs as often as all of small ones).
    const named = JSON.stringify(r.updates.map((u) => ({ job: u.job, pod: u.pod })));
    const pods = await tx.$queryRaw<
      {
        id: string;
        jobId: string;
        name: string;
        state: PodState;
        nodeName: string | null;
        message: string | null;
        bindInFlight: boolean;
        lastBind: string | null;
      }[]
    >`
      SELECT DISTINCT p.id::text AS id, p.job_id::text AS "jobId", p.name, p.state::text AS state,
        p.node_name AS "nodeName", p.message,
        EXISTS (SELECT 1 FROM bind_request b WHERE b.pod_id = p.id AND b.kind = 'BIND'
                  AND b.state IN ('PENDING', 'DISPATCHED')) AS "bindInFlight",
        (SELECT b.id::text FROM bind_request b WHERE b.pod_id = p.id AND b.kind = 'BIND'
          ORDER BY b.created_at DESC, b.id DESC LIMIT 1) AS "lastBind"
      FROM jsonb_to_recordset(${named}::jsonb) AS v(job uuid, pod text)
      JOIN pod p ON p.job_id = v.job AND p.name = v.pod`;
    const podByKey = new Map(pods.map((p) => [`${p.jobId}/${p.name}`, p]));

    const changes = new Map<string, PodChange>();
    const failures: GangFailure[] = [];
    r.updates.forEach((u, i) => {
      const job = jobs.get(u.job);
      if (!job || job.clusterName !== r.cluster)
        throw invalidAt(["updates", i, "job"], `job ${u.job} is not on cluster ${r.cluster}`);
      const pod = podByKey.get(`${u.job}/${u.pod}`);
      if (!pod) throw invalidAt(["updates", i, "pod"], `job ${job.name} has no pod "${u.pod}"`);
      const current = changes.get(pod.id)?.state ?? pod.state;
      // A workload's controller made a pod of a run that ended again: the pod is to be placed anew.
      if (u.recreated && job.workload && u.state === "PENDING" && TERMINAL_POD_STATES.includes(current)) {
        if (job.state === "CANCELLED" || job.state === "FAILED" || job.state === "SUCCEEDED") return;
        changes.set(pod.id, {
          id: pod.id,
          state: "PENDING",
          node: null,
          gpuGroups: [],
          gpuDevices: [],
          message: u.message ?? "made again by its controller",
          newRun: true,
        });
        return;
      }
      if (TERMINAL_POD_STATES.includes(current)) return;
      if (staleRunReport(current, u.state)) return;
      // A pod being bound anew whose bind is not carried out yet: a report that it left its node
      // is about an earlier run (its eviction's report, late or retried). The bind's own result
      // says what became of this one.
      if (u.state === "PENDING" && current === "BINDING" && pod.bindInFlight) return;
      // A report naming the bind whose run it ends, when the pod has been bound anew since: that
      // run ended before the books' current one began (an eviction's report arriving after the new
      // bind was carried out, even on the same node), so it says nothing of where the pod is now.
      if (u.bindRequest && pod.lastBind && u.bindRequest.toLowerCase() !== pod.lastBind) return;
      const evicted = current === "RELEASING" && TERMINAL_POD_STATES.includes(u.state);
      let state: PodState = evicted ? "PENDING" : u.state;
      let message = evicted ? (pod.message ?? "evicted") : (u.message ?? null);
      // Off its node for good: the job was cancelled or stopped (its run-time limit).
      if (state === "PENDING" && (job.state === "CANCELLED" || job.state === "FAILED")) {
        state = "FAILED";
        message = job.state === "CANCELLED" ? "job cancelled" : (pod.message ?? "job failed");
      }
      if (state === current && message === (pod.message ?? null)) return;
      const keepsNode = keepsNodeName(state);
      changes.set(pod.id, {
        id: pod.id,
        state,
        node: keepsNode ? pod.nodeName : null,
        gpuGroups: keepsNode ? undefined : [],
        gpuDevices: keepsNode ? undefined : [],
        message,
        ...(TERMINAL_POD_STATES.includes(state) && u.exitCode != null ? { exitCode: u.exitCode } : {}),
      });
      // Failed, or gone from its node without the scheduler taking it off: a gang failure.
      const left =
        state === "FAILED" || (state === "PENDING" && (current === "RUNNING" || current === "BINDING"));
      if (left && !evicted && job.state !== "CANCELLED" && job.state !== "FAILED")
        failures.push({
          jobId: u.job,
          pod: pod.name,
          exitCode: state === "FAILED" ? (u.exitCode ?? null) : null,
          node: pod.nodeName,
          message,
        });
    });
    if (!changes.size) return 0;

    await writePodChanges(tx, [...changes.values()], now);
    // A pod confirmed running where the scheduler bound it changes nothing a session decides on
    // (both states hold the node): such reports leave the fence alone, so a busy cluster's
    // stream of confirmations does not refuse every session planned meanwhile.
    const podById = new Map(pods.map((p) => [p.id, p]));
    if ([...changes.values()].some((c) => !(c.state === "RUNNING" && podById.get(c.id)?.state === "BINDING")))
      await bumpGeneration(tx, r.cluster);
    const byJob = new JobLines();
    for (const c of changes.values()) {
      const pod = podById.get(c.id)!;
      byJob.add(pod.jobId, `${pod.name} ${c.state}${c.message ? ` (${c.message})` : ""}`);
    }
    byJob.record(record, "pods.status", r.cluster, (id) => jobs.get(id)!, ", ");
    const gang = await applyGangFailures(tx, r.cluster, failures, now, record);
    await refreshJobs(tx, byJob.jobs(), now, record, gang.notes);
    return changes.size;
  });
}

const bindResultInput = z
  .object({
    cluster: clusterName,
    results: z
      .array(
        z
          .object({
            bindRequest: z.uuid("not a BindRequest id"),
            ok: z.boolean(),
            message: z.string().max(2000).nullish(),
          })
          .strict(),
      )
      .max(10_000),
  })
  .strict();
export type ReportBindResultInput = z.input<typeof bindResultInput>;

/**
 * Closes BindRequests: SUCCEEDED or FAILED (with the agent's message as lastError). A failed
 * bind returns its pod to PENDING with the reason; a failed eviction leaves the pod RUNNING; a
 * successful eviction frees the pod (PENDING again, or FAILED if its job was cancelled or stopped).
 * Results for requests already closed are ignored; one for a request older than the pod's latest
 * of its kind closes it and changes no pod. A bind carried out where the books no longer hold
 * the pod (taken back, evicted or stopped before the agent got to it, and the agent carried the
 * requests out in the other order, e.g. after a restart) left a pod running that nothing
 * accounts for: an EVICT request removes it. Returns how many requests were closed.
 */
export async function reportBindResult(
  store: Store,
  actor: Actor,
  input: ReportBindResultInput,
): Promise<number> {
  const r = parseInput(bindResultInput, input);
  const now = new Date();
  return transact(store, actor, async (tx, record) => {
    if (!(await lockCluster(tx, r.cluster))) throw new NotFoundError("cluster", r.cluster, "cluster");
    const ids = [...new Set(r.results.map((x) => x.bindRequest))];
    const requests = new Map((await requestsWithPods(tx, ids)).map((b) => [b.id, b]));
    const closed = new Set<string>();
    const succeeded: string[] = [];
    const failed: { id: string; error: string }[] = [];
    const podChanges = new Map<string, PodChange>();
    const strays: NewBindRequest[] = [];
    const lines = new JobLines();
    for (const [i, res] of r.results.entries()) {
      const req = requests.get(res.bindRequest);
      if (!req || req.clusterName !== r.cluster)
        throw invalidAt(
          ["results", i, "bindRequest"],
          `BindRequest ${res.bindRequest} is not on cluster ${r.cluster}`,
        );
      if (req.state === "SUCCEEDED" || req.state === "FAILED" || closed.has(req.id)) continue;
      closed.add(req.id);
      if (res.ok) succeeded.push(req.id);
      else failed.push({ id: req.id, error: res.message ?? "no reason given" });
      if (res.ok && req.kind === "BIND")
        lines.bound(req.jobId, (now.getTime() - req.createdAt.getTime()) / 1000);
      const pod = req.pod;
      // A result about the pod where it is now: the pod's latest request of its kind. An older
      // one (an eviction's result arriving after the pod was bound anew and evicted again on the
      // same node) is about a run that has ended: taken as confirming the newer eviction, the
      // books would free what the pod still holds.
      const onNode = pod.nodeName === req.nodeName && req.latestOfKind;
      const stray =
        req.kind === "BIND" && res.ok && !(pod.nodeName === req.nodeName && holdsNodeState(pod.state));
      const what =
        `${req.kind === "BIND" ? `bind of ${pod.name} on ${req.nodeName}` : req.kind === "EVICT" ? `eviction of ${pod.name} on ${req.nodeName}` : "deletion of its workload"} ${res.ok ? "succeeded" : `failed: ${res.message ?? "no reason given"}`}` +
        (stray ? `, after the pod was taken off ${req.nodeName}: evicting it` : "");
      if (stray)
        strays.push({
          kind: "EVICT",
          cluster: r.cluster,
          jobId: req.jobId,
          podId: pod.id,
          node: req.nodeName,
          gpuGroups: [],
          reason: `bound to ${req.nodeName} after it was taken off that node`,
        });
      lines.add(req.jobId, what);
      if (req.kind === "BIND" && !res.ok && onNode && pod.state === "BINDING") {
        podChanges.set(pod.id, {
          id: pod.id,
          state: "PENDING",
          node: null,
          gpuGroups: [],
          gpuDevices: [],
          message: `bind to ${req.nodeName} failed: ${res.message ?? "no reason given"}`,
        });
      } else if (req.kind === "EVICT" && onNode && pod.state === "RELEASING") {
        if (!res.ok)
          podChanges.set(pod.id, {
            id: pod.id,
            state: "RUNNING",
            node: pod.nodeName,
            message: `eviction failed: ${res.message ?? "no reason given"}`,
          });
        else if (req.job.state === "CANCELLED")
          podChanges.set(pod.id, { id: pod.id, state: "FAILED", node: null, message: "job cancelled" });
        else if (req.job.state === "FAILED")
          // the job was stopped (its run-time limit): the pod ends with the reason it was evicted for
          podChanges.set(pod.id, { id: pod.id, state: "FAILED", node: null, message: req.reason });
        else
          podChanges.set(pod.id, {
            id: pod.id,
            state: "PENDING",
            node: null,
            gpuGroups: [],
            gpuDevices: [],
            message: `evicted: ${req.reason}`,
          });
      }
    }
    await closeBindRequests(tx, [...succeeded.map((id) => ({ id, error: null })), ...failed], now);
    if (podChanges.size) await writePodChanges(tx, [...podChanges.values()], now);
    if (podChanges.size || strays.length) {
      const generation = await bumpGeneration(tx, r.cluster);
      // Sent from the outbox (the cluster's next cycle, or the sweeper); decided at this
      // generation, so a later bind of the pod that the agent carries out first makes it stale.
      await createBindRequests(tx, strays, generation);
    }
    const jobOf = new Map([...requests.values()].map((b) => [b.jobId, b.job]));
    lines.record(record, "bind.result", r.cluster, (id) => jobOf.get(id)!, "; ");
    await refreshJobs(tx, lines.jobs(), now, record);
    return closed.size;
  });
}

/** What a report did, line by line per job: one event per job (not per pod). */
class JobLines {
  private readonly byJob = new Map<string, string[]>();
  private readonly bindSeconds = new Map<string, number[]>();

  /** A bind of the job succeeded this long after its commit. */
  bound(job: string, seconds: number): void {
    const all = this.bindSeconds.get(job);
    if (all) all.push(Math.max(0, seconds));
    else this.bindSeconds.set(job, [Math.max(0, seconds)]);
  }

  add(job: string, line: string): void {
    const lines = this.byJob.get(job);
    if (lines) lines.push(line);
    else this.byJob.set(job, [line]);
  }

  jobs(): string[] {
    return [...this.byJob.keys()];
  }

  record(
    record: RecordEvent,
    kind: string,
    cluster: string,
    jobOf: (id: string) => { name: string; queueName: string },
    separator: string,
  ): void {
    for (const [id, lines] of this.byJob) {
      const job = jobOf(id);
      const bindSeconds = this.bindSeconds.get(id);
      record({
        kind,
        job: id,
        queue: job.queueName,
        cluster,
        message: `job ${job.name}: ${lines.join(separator)}`,
        data: bindSeconds ? { bindSeconds } : null,
      });
    }
  }
}

interface RequestWithPod {
  id: string;
  clusterName: string;
  kind: "BIND" | "EVICT";
  state: BindRequestState;
  jobId: string;
  nodeName: string;
  reason: string;
  /** No request of the same kind for the pod was created after this one. */
  latestOfKind: boolean;
  pod: Pick<Pod, "id" | "name" | "state" | "nodeName">;
  job: Pick<Job, "name" | "queueName" | "state">;
  /** When the request was committed. */
  createdAt: Date;
}

/** The requests with their pod and job, in one query. */
async function requestsWithPods(tx: Tx, ids: readonly string[]): Promise<RequestWithPod[]> {
  const rows = await tx.$queryRaw<
    (Omit<RequestWithPod, "pod" | "job"> & {
      podId: string;
      podName: string;
      podState: PodState;
      podNode: string | null;
      jobName: string;
      queueName: string;
      jobState: JobState;
    })[]
  >`
    SELECT b.id::text AS id, b.cluster_name AS "clusterName", b.kind::text AS kind, b.state::text AS state,
      b.created_at AS "createdAt",
      b.job_id::text AS "jobId", b.node_name AS "nodeName", b.reason,
      NOT EXISTS (SELECT 1 FROM bind_request n WHERE n.pod_id = b.pod_id AND n.kind = b.kind
                    AND (n.created_at, n.id) > (b.created_at, b.id)) AS "latestOfKind",
      p.id::text AS "podId", p.name AS "podName", p.state::text AS "podState", p.node_name AS "podNode",
      j.name AS "jobName", j.queue_name AS "queueName", j.state::text AS "jobState"
    FROM bind_request b JOIN pod p ON p.id = b.pod_id JOIN job j ON j.id = b.job_id
    WHERE b.id = ANY(${[...ids]}::uuid[])`;
  return rows.map((r) => ({
    id: r.id,
    clusterName: r.clusterName,
    kind: r.kind,
    state: r.state,
    jobId: r.jobId,
    nodeName: r.nodeName,
    reason: r.reason,
    latestOfKind: r.latestOfKind,
    createdAt: r.createdAt,
    pod: { id: r.podId, name: r.podName, state: r.podState, nodeName: r.podNode },
    job: { name: r.jobName, queueName: r.queueName, state: r.jobState },
  }));
}

/** Closes requests in one statement: SUCCEEDED (error null) or FAILED with the agent's message. */
async function closeBindRequests(
  tx: Tx,
  closing: readonly { id: string; error: string | null }[],
  now: Date,
): Promise<void> {
  if (!closing.length) return;
  await tx.$executeRaw`
    UPDATE bind_request b SET
      state = CASE WHEN v.error IS NULL THEN 'SUCCEEDED' ELSE 'FAILED' END::"BindRequestState",
      completed_at = ${now}, last_error = v.error
    FROM jsonb_to_recordset(${JSON.stringify(closing)}::jsonb) AS v(id uuid, error text)
    WHERE b.id = v.id`;
}
