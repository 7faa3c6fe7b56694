// Agent: pod phases on its cluster, and the results of the BindRequests it carried out.
// Both are idempotent: repeating a report changes nothing the second time.
import { z } from "zod";
import { NotFoundError } from "../errors.js";
import type { PodState } from "../generated/prisma/enums.js";
import { type Actor, type Store, transact } from "../store.js";
import { clusterName } from "../validation/names.js";
import { invalidAt, parseInput } from "../validation/parse.js";
import { bumpGeneration, lockCluster } from "./cluster-fence.js";
import { refreshJobs } from "./job-refresh.js";
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
          })
          .strict(),
      )
      .max(10_000),
  })
  .strict();
export type ReportPodStatusInput = z.input<typeof podStatusInput>;

const TERMINAL_POD: readonly PodState[] = ["SUCCEEDED", "FAILED"];

/**
 * Applies pod phases. A finished pod stays finished (late reports are ignored); a pod reported
 * PENDING is off its node (evicted or lost) and waits to be placed again — unless its job was
 * cancelled, then it ends FAILED. Returns how many pods changed.
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
        await tx.job.findMany({
          where: { id: { in: jobIds } },
          select: { id: true, clusterName: true, state: true, name: true, queueName: true },
        })
      ).map((j) => [j.id, j]),
    );
    const pods = await tx.pod.findMany({
      where: { jobId: { in: jobIds } },
      select: { id: true, jobId: true, name: true, state: true, nodeName: true, message: true },
    });
    const podByKey = new Map(pods.map((p) => [`${p.jobId}/${p.name}`, p]));

    const changes = new Map<string, PodChange>();
    r.updates.forEach((u, i) => {
      const job = jobs.get(u.job);
      if (!job || job.clusterName !== r.cluster)
        throw invalidAt(["updates", i, "job"], `job ${u.job} is not on cluster ${r.cluster}`);
      const pod = podByKey.get(`${u.job}/${u.pod}`);
      if (!pod) throw invalidAt(["updates", i, "pod"], `job ${job.name} has no pod "${u.pod}"`);
      const current = changes.get(pod.id)?.state ?? pod.state;
      if (TERMINAL_POD.includes(current)) return;
      let state: PodState = u.state;
      let message = u.message ?? null;
      if (state === "PENDING" && job.state === "CANCELLED") {
        state = "FAILED";
        message = "job cancelled";
      }
      if (state === current && message === (pod.message ?? null)) return;
      const keepsNode = state === "RUNNING" || state === "RELEASING" || TERMINAL_POD.includes(state);
      changes.set(pod.id, {
        id: pod.id,
        state,
        node: keepsNode ? pod.nodeName : null,
        gpuGroups: keepsNode ? undefined : [],
        gpuDevices: keepsNode ? undefined : [],
        message,
      });
    });
    if (!changes.size) return 0;

    await writePodChanges(tx, [...changes.values()], now);
    // A pod confirmed running where the scheduler bound it changes nothing a session decides on
    // (both states hold the node): such reports leave the fence alone, so a busy cluster's
    // stream of confirmations does not refuse every session planned meanwhile.
    const podState = new Map(pods.map((p) => [p.id, p.state]));
    if ([...changes.values()].some((c) => !(c.state === "RUNNING" && podState.get(c.id) === "BINDING")))
      await bumpGeneration(tx, r.cluster);
    const byJob = new Map<string, string[]>();
    for (const c of changes.values()) {
      const pod = pods.find((p) => p.id === c.id)!;
      byJob.set(pod.jobId, [
        ...(byJob.get(pod.jobId) ?? []),
        `${pod.name} ${c.state}${c.message ? ` (${c.message})` : ""}`,
      ]);
    }
    for (const [id, lines] of byJob) {
      const job = jobs.get(id)!;
      record({
        kind: "pods.status",
        job: id,
        queue: job.queueName,
        cluster: r.cluster,
        message: `job ${job.name}: ${lines.join(", ")}`,
      });
    }
    await refreshJobs(tx, [...byJob.keys()], now, record);
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
 * successful eviction frees the pod (PENDING again, or FAILED if its job was cancelled).
 * Results for requests already closed are ignored. Returns how many requests were closed.
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
    const requests = new Map(
      (
        await tx.bindRequest.findMany({
          where: { id: { in: ids } },
          include: {
            pod: { select: { id: true, name: true, state: true, nodeName: true } },
            job: { select: { name: true, queueName: true, state: true } },
          },
        })
      ).map((b) => [b.id, b]),
    );
    const closed = new Set<string>();
    const succeeded: string[] = [];
    const failed: { id: string; error: string }[] = [];
    const podChanges = new Map<string, PodChange>();
    const lines = new Map<string, string[]>();
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
      const pod = req.pod;
      const onNode = pod.nodeName === req.nodeName;
      const what = `${req.kind === "BIND" ? "bind" : "eviction"} of ${pod.name} on ${req.nodeName} ${res.ok ? "succeeded" : `failed: ${res.message ?? "no reason given"}`}`;
      lines.set(req.jobId, [...(lines.get(req.jobId) ?? []), what]);
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
    await tx.bindRequest.updateMany({
      where: { id: { in: succeeded } },
      data: { state: "SUCCEEDED", completedAt: now, lastError: null },
    });
    for (const f of failed) {
      await tx.bindRequest.update({
        where: { id: f.id },
        data: { state: "FAILED", completedAt: now, lastError: f.error },
      });
    }
    if (podChanges.size) {
      await writePodChanges(tx, [...podChanges.values()], now);
      await bumpGeneration(tx, r.cluster);
    }
    for (const [jobId, list] of lines) {
      const job = [...requests.values()].find((b) => b.jobId === jobId)!.job;
      record({
        kind: "bind.result",
        job: jobId,
        queue: job.queueName,
        cluster: r.cluster,
        message: `job ${job.name}: ${list.join("; ")}`,
      });
    }
    await refreshJobs(tx, [...lines.keys()], now, record);
    return closed.size;
  });
}
