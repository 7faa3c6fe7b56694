// What a dry run of a submission reads: the jobs the inputs would become — checked as submitJob,
// submitJobs and submitWorkload check them, the queues' policies included — as admission
// candidates with fresh ids and PENDING pods, and their declared run times. Nothing is written.
import { prismaOf } from "../client.js";
import type { Job } from "../types.js";
import { uuidv7 } from "../ids.js";
import type { Actor, Store } from "../store.js";
import { errorAt } from "../validation/parse.js";
import type { SubmitJobInput, JobSpec } from "../validation/submit-job.js";
import { type SubmitWorkloadInput, workloadJobSpec, workloadQueue } from "../validation/submit-workload.js";
import { previewSpec, refusalOf, specRows } from "../operations/submit-job.js";
import { checkBatchSize } from "../operations/submit-jobs.js";
import { checkManifestSize } from "../operations/submit-workload.js";
import { NotFoundError } from "../errors.js";
import { clusterPodPolicies } from "./cluster-pod-policy.js";
import { queuePolicy } from "./queue-policy.js";
import { type AdmissionCandidate, candidateOfRows } from "./admission.js";

export interface PreviewedJob {
  /** The row submit would write (its id fresh, never stored). */
  job: Job;
  candidate: AdmissionCandidate;
}

/** The jobs these inputs would become, in order; the first bad input refuses all (`[i].field`
 * when several). */
export async function previewCandidates(
  store: Store,
  actor: Actor,
  inputs: readonly SubmitJobInput[],
): Promise<PreviewedJob[]> {
  return previewAll(inputs, actor, (input) => previewSpec(store, input));
}

/** The jobs these manifests would become (as submitWorkload makes them), in order. */
export async function previewWorkloadCandidates(
  store: Store,
  actor: Actor,
  inputs: readonly SubmitWorkloadInput[],
): Promise<PreviewedJob[]> {
  return previewAll(inputs, actor, (input) => workloadSpec(store, input));
}

async function workloadSpec(store: Store, input: SubmitWorkloadInput): Promise<JobSpec> {
  checkManifestSize(input);
  const queue = workloadQueue(input);
  const policy = await queuePolicy(prismaOf(store), queue);
  if (!policy) throw new NotFoundError("queue", queue, "queue");
  const cluster = (await clusterPodPolicies(prismaOf(store), [input.cluster])).get(input.cluster ?? "");
  const spec = workloadJobSpec(input, policy, cluster);
  const refused = await refusalOf(store, spec);
  if (refused) throw refused;
  return spec;
}

async function previewAll<I>(
  inputs: readonly I[],
  actor: Actor,
  specOf: (input: I) => Promise<JobSpec>,
): Promise<PreviewedJob[]> {
  checkBatchSize(inputs);
  const many = inputs.length > 1;
  const now = new Date();
  const out: PreviewedJob[] = [];
  for (const [i, input] of inputs.entries()) {
    let spec: JobSpec;
    try {
      spec = await specOf(input);
    } catch (e) {
      throw many ? inputError(e as Error, i) : e;
    }
    out.push(previewed(spec, actor, now));
  }
  return out;
}

/** The error as one of the i-th input (`[i].field`), as submitJobs names it. */
function inputError(e: Error, i: number): Error {
  if (e instanceof NotFoundError && e.field) return new NotFoundError(e.kind, e.key, `[${i}].${e.field}`);
  return errorAt(e, [i]);
}

/** A spec as the rows submit writes (its pods PENDING), as admission reads them. */
function previewed(spec: JobSpec, actor: Actor, now: Date): PreviewedJob {
  const { job, tasks } = specRows(spec, uuidv7(now.getTime()), actor, now);
  const pods = spec.tasks.flatMap((t) =>
    Array.from({ length: t.replicas }, (_, i) => ({
      id: uuidv7(now.getTime()),
      jobId: job.id,
      taskName: t.name,
      name: `${t.name}-${i}`,
      state: "PENDING" as const,
      nodeName: null,
      gpuGroups: [],
      gpuDevices: [],
      clusterUid: null,
      message: null,
      exitCode: null,
      cpuMillis: t.cpuMillis,
      memory: t.memory,
      gpus: t.gpus,
      gpuFraction: t.gpuFraction,
      gpuMemory: t.gpuMemory,
      createdAt: now,
      updatedAt: now,
      startedAt: null,
      finishedAt: null,
    })),
  );
  return { job, candidate: candidateOfRows(job, tasks, pods) };
}
