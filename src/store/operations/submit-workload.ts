// submitWorkload / submitWorkloads: Kubernetes manifests (Job, JobSet, PyTorchJob, MPIJob) as
// jobs — their pod sets become the job's tasks, checked as submitted specs are — written as
// submitJob and submitJobs write theirs (one statement; a batch in one transaction; idempotent on
// each input's key). The job keeps the manifest: its cluster's agent creates the object once the
// job is placed. The queue's policy (its default request included) is read, and the manifest made
// into a job and checked, in the transaction that stores the job.
import { prismaOf } from "../client.js";
import type { Actor, Store } from "../store.js";
import { errorAt, invalidAt } from "../validation/parse.js";
import { clusterPodPolicies } from "../queries/cluster-pod-policy.js";
import { type SubmitWorkloadInput, workloadJobSpec, workloadQueue } from "../validation/submit-workload.js";
import { type SubmitResult, storeJobSpec } from "./submit-job.js";
import { checkBatchSize, policyAt, storeJobSpecs } from "./submit-jobs.js";

/** A manifest is at most 1 MiB of JSON: its pod templates are at most 256 KiB each, and the job
 * keeps the whole manifest, which its agent reads to create the object. */
export const MAX_MANIFEST_BYTES = 1024 * 1024;

/** Refuses an oversized manifest before anything reads it. */
export function checkManifestSize(input: SubmitWorkloadInput): void {
  const bytes = Buffer.byteLength(JSON.stringify(input?.manifest ?? null) ?? "", "utf8");
  if (bytes > MAX_MANIFEST_BYTES)
    throw invalidAt(
      ["manifest"],
      `a manifest must be at most ${MAX_MANIFEST_BYTES} bytes of JSON (got ${bytes})`,
    );
}

export async function submitWorkload(
  store: Store,
  actor: Actor,
  input: SubmitWorkloadInput,
): Promise<SubmitResult> {
  checkManifestSize(input);
  const cluster = (await clusterPodPolicies(prismaOf(store), [input.cluster])).get(input.cluster ?? "");
  return storeJobSpec(store, actor, workloadQueue(input), (policy) =>
    workloadJobSpec(input, policy, cluster),
  );
}

export async function submitWorkloads(
  store: Store,
  actor: Actor,
  inputs: readonly SubmitWorkloadInput[],
): Promise<SubmitResult[]> {
  checkBatchSize(inputs);
  const queues = inputs.map((input, i) => {
    try {
      checkManifestSize(input);
      return workloadQueue(input);
    } catch (e) {
      throw errorAt(e as Error, [i]);
    }
  });
  const clusters = await clusterPodPolicies(
    prismaOf(store),
    inputs.map((input) => input.cluster),
  );
  return storeJobSpecs(store, actor, queues, (policies) =>
    inputs.map((input, i) => {
      const policy = policyAt(policies, queues[i]!, i);
      try {
        return workloadJobSpec(input, policy, clusters.get(input.cluster ?? ""));
      } catch (e) {
        throw errorAt(e as Error, [i]);
      }
    }),
  );
}
