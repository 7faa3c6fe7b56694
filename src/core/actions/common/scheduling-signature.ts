// A job's scheduling-constraints signature (KAI: PodGroupInfo.GetSchedulingConstraintsSignature):
// what, besides the size of its requests, decides where its pods may go. Two jobs with
// equal signatures differ only in how many pods they ask for and how large those are, so
// "easier to schedule" (minimal-job-representatives) can compare them by requests alone.
// Built like KAI's: per pod set, the topology constraints of the set and of every parent
// set, and the sorted constraint keys of its pods that are not placed; per job, the sorted
// pod-set signatures (a fully placed pod set contributes ""), plus the job's priority
// (KAI hashes the pods' priority, which is the job's priority class).
import { CONSTRAINT_FIELDS, type PodInfo } from "../../api/pod-info.js";
import type { JobInfo, PodSet, TopologyConstraint } from "../../api/podgroup-info.js";
import { isActiveAllocated } from "../../api/status.js";
import type { Session } from "../../framework/session.js";

/** The pod's placement constraints as a string ("" when it has none), kept in `podKeys`. */
function podConstraintKey(podKeys: WeakMap<PodInfo, string>, pod: PodInfo): string {
  let k = podKeys.get(pod);
  if (k === undefined) {
    k = "";
    for (const f of CONSTRAINT_FIELDS) {
      const v = pod.spec[f];
      if (v === undefined || v === null || v === false || (Array.isArray(v) && v.length === 0)) continue;
      k += `${f}=${JSON.stringify(v)};`;
    }
    podKeys.set(pod, k);
  }
  return k;
}

function topologyKey(t: TopologyConstraint | null): string {
  return t ? `${t.topology}:${t.required ?? ""}:${t.preferred ?? ""}` : "";
}

function podSetSignature(podKeys: WeakMap<PodInfo, string>, ps: PodSet): string {
  if (ps.activeAllocated === ps.pods.length) return "";
  let s = topologyKey(ps.topology);
  for (let p = ps.parent; p; p = p.parent) s += `|${topologyKey(p.topology)}`;
  const pods: string[] = [];
  for (const pod of ps.pods) if (!isActiveAllocated(pod.status)) pods.push(podConstraintKey(podKeys, pod));
  pods.sort();
  return `${s}[${pods.join(",")}]`;
}

/** Cached with the job (carried with it) until one of its pods changes status. */
export function schedulingSignature(ssn: Session, job: JobInfo): string {
  const memos = ssn.memos.lasting;
  const c = memos.signatures.get(job);
  const revision = memos.revision(job);
  if (c && c.revision === revision) return c.signature;
  const podKeys = memos.podConstraintKeys;
  const sets = job.podSetList.map((ps) => podSetSignature(podKeys, ps)).sort();
  const signature = `${job.priority}#${sets.join("#")}`;
  memos.signatures.set(job, { revision, signature });
  return signature;
}
