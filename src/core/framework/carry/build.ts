// A session's jobs and nodes from its snapshot: a job per pod group, in snapshot order; a node
// per node spec, in name order, holding the placed pods of every job, added in name order (ties:
// snapshot order). With a carry, the previous session's jobs and nodes are taken again where
// they are what building them would give (see SessionCarry), and only what changed is visited.
import { NodeInfo } from "../../api/node-info.js";
import { PodInfo } from "../../api/pod-info.js";
import { JobInfo } from "../../api/podgroup-info.js";
import { TaskRequests } from "../../api/resources.js";
import type { PodGroupSpec, Snapshot } from "../../api/spec.js";
import { isActiveUsed } from "../../api/status.js";
import type { SessionCarry } from "./session-carry.js";

export interface SessionContents {
  /** Jobs by uid, in snapshot order. */
  jobs: Map<string, JobInfo>;
  /** Every job built or taken, in snapshot order (more than `jobs` holds when uids repeat). */
  opened: JobInfo[];
  /** Nodes in name order. */
  nodes: NodeInfo[];
}

type Arrivals = (readonly PodInfo[] | undefined)[];

const byName = <T extends { name: string }>(a: T, b: T) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
const inNameOrder = (pods: readonly PodInfo[]): boolean => {
  for (let i = 1; i < pods.length; i++) if (pods[i - 1]!.name > pods[i]!.name) return false;
  return true;
};
const NO_PODS: PodInfo[] = [];

function newJob(spec: PodGroupSpec, requests: TaskRequests): JobInfo {
  const job = new JobInfo(spec);
  for (const p of spec.pods) job.addPod(new PodInfo(p, job.uid, requests));
  return job;
}

export function buildSession(snapshot: Snapshot, carry: SessionCarry | null): SessionContents {
  const specs = [...snapshot.nodes].sort(byName);
  const indexOf = new Map<string, number>();
  for (let i = 0; i < specs.length; i++) indexOf.set(specs[i]!.name, i);
  // A node whose pods arrive exactly as they did for the previous session (the very same
  // objects in the same order) sorts them into the same order: the previous order is used
  // again without sorting.
  const before: Arrivals = new Array(specs.length);
  if (carry) for (let i = 0; i < specs.length; i++) before[i] = carry.arrivalOn(specs[i]!.name);
  carry?.opening();
  const requests = carry ? carry.requests : new TaskRequests();
  const jobs = new Map<string, JobInfo>();
  const opened: JobInfo[] = [];
  /** The jobs built from their specs (not carried). */
  const built: JobInfo[] = [];
  for (const spec of snapshot.jobs) {
    let job = carry?.take(spec, opened.length) ?? null;
    if (!job) {
      job = newJob(spec, requests);
      built.push(job);
      carry?.built(job, opened.length);
    }
    opened.push(job);
    jobs.set(job.uid, job);
  }
  // Jobs of equal uids (not from a store) leave pods on nodes that no job of the map holds: the
  // next session then visits every pod.
  const unique = jobs.size === opened.length;
  const arrivals =
    carry?.keptOrder && unique && carry.heldNodes(specs)
      ? arrivalsFromCarry(carry, jobs, built, before, indexOf)
      : arrivalsOfAllPods(opened, before, indexOf, carry);
  const nodes: NodeInfo[] = new Array(specs.length);
  let lastReopened: JobInfo | null = null;
  for (let i = 0; i < specs.length; i++) {
    const arrival = arrivals[i] ?? NO_PODS;
    let pods = arrival.length > 0 && arrival === before[i] ? carry?.podsOn(specs[i]!.name) : undefined;
    if (!pods) pods = inNameOrder(arrival) ? arrival : [...arrival].sort(byName);
    let node = carry?.takeNode(specs[i]!, pods) ?? null;
    if (!node) {
      node = new NodeInfo(specs[i]!);
      for (const p of pods) {
        if (!carry) {
          node.addTask(p);
          continue;
        }
        // A carried pod still holds what its last node set.
        p.reset();
        node.addTask(p);
        // Accepted on a node built anew: the share may differ from the last open's.
        const job = jobs.get(p.jobUid)!;
        if (job !== lastReopened) {
          carry.reopened(job);
          lastReopened = job;
        }
      }
    }
    carry?.openedNode(node, pods, unique ? arrival : null);
    nodes[i] = node;
  }
  return { jobs, opened, nodes };
}

/**
 * Every job's placed pods per node, in snapshot order. A node's list that is the previous
 * session's pod for pod is that very list (`before`). With a carry, a pod added to no node has
 * its job reopened (whatever share it was accepted with before, it has none now).
 */
function arrivalsOfAllPods(
  jobs: readonly JobInfo[],
  before: Arrivals,
  indexOf: ReadonlyMap<string, number>,
  carry: SessionCarry | null,
): Arrivals {
  // While a node's pods match `before` they are only counted (`matched`); -1 once they
  // differ, and `onNode` holds them.
  const n = before.length;
  const matched = new Int32Array(n);
  const onNode: (PodInfo[] | undefined)[] = new Array(n);
  for (const job of jobs)
    for (const pod of job.pods) {
      if (!pod.nodeName || !isActiveUsed(pod.status)) continue;
      const i = indexOf.get(pod.nodeName);
      if (i === undefined) {
        if (carry) {
          carry.reopened(job);
          pod.reset();
        }
        continue;
      }
      const m = matched[i]!;
      if (m < 0) {
        onNode[i]!.push(pod);
        continue;
      }
      const prev = before[i];
      if (prev && m < prev.length && prev[m] === pod) {
        matched[i] = m + 1;
        continue;
      }
      const list = prev ? prev.slice(0, m) : [];
      list.push(pod);
      onNode[i] = list;
      matched[i] = -1;
    }
  const out: Arrivals = new Array(n);
  for (let i = 0; i < n; i++) {
    const m = matched[i]!;
    const prev = before[i];
    out[i] = m < 0 ? onNode[i] : m === 0 ? undefined : m === prev!.length ? prev : prev!.slice(0, m);
  }
  return out;
}

/**
 * The same lists without visiting the pods of carried jobs, when the nodes are the previous
 * session's (the same names, each with its previous arrival) and the carried jobs come in the
 * same order as then. A carried job's pods are the very objects of the previous session, with
 * the same statuses and nodes (the same specs, untouched), so a node's list changes only where
 * a pod of a job built anew arrives or one of a job not carried again was: only those nodes'
 * lists are made again (their carried pods, still in snapshot order, merged with the new ones
 * by the position of their jobs). A carried pod on a node of no list was on none before either
 * (it holds no share: it was reset, or never added, when it came to be on none).
 */
function arrivalsFromCarry(
  carry: SessionCarry,
  jobs: ReadonlyMap<string, JobInfo>,
  built: readonly JobInfo[],
  before: Arrivals,
  indexOf: ReadonlyMap<string, number>,
): Arrivals {
  const n = before.length;
  const out: Arrivals = [...before];
  const position = (pod: PodInfo): number => carry.position(jobs.get(pod.jobUid)!);
  const changed = new Uint8Array(n);
  const added: (PodInfo[] | undefined)[] = new Array(n);
  for (const job of built)
    for (const pod of job.pods) {
      if (!pod.nodeName || !isActiveUsed(pod.status)) continue;
      const i = indexOf.get(pod.nodeName);
      if (i === undefined) continue;
      changed[i] = 1;
      const list = added[i];
      if (list) list.push(pod);
      else added[i] = [pod];
    }
  // A job of the previous session not carried again: its pods were where their specs said
  // when that session opened.
  for (const job of carry.notTaken())
    for (const pod of job.pods) {
      const i = pod.spec.node === null ? undefined : indexOf.get(pod.spec.node);
      if (i !== undefined && isActiveUsed(pod.spec.status)) changed[i] = 1;
    }
  for (let i = 0; i < n; i++) {
    if (!changed[i]) continue;
    const kept: PodInfo[] = [];
    for (const pod of before[i]!) if (carry.took(jobs.get(pod.jobUid))) kept.push(pod);
    const more = added[i];
    if (!more) {
      out[i] = kept;
      continue;
    }
    const list: PodInfo[] = [];
    let a = 0;
    let b = 0;
    while (a < kept.length && b < more.length) {
      const ka = position(kept[a]!);
      const kb = position(more[b]!);
      list.push(ka < kb ? kept[a++]! : more[b++]!);
    }
    while (a < kept.length) list.push(kept[a++]!);
    while (b < more.length) list.push(more[b++]!);
    out[i] = list;
  }
  return out;
}
