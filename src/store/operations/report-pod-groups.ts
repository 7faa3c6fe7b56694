// Agent: pod groups users created directly in its cluster (pods with `schedulerName: fleetq` and
// a `fleetq.io/pod-group` annotation). Each group is one job on that cluster, keyed on
// (cluster, namespace, name), whose pods are exactly the reported ones. Idempotent: a repeated
// report changes nothing.
import type { Tx } from "../db.js";
import { isFinished } from "../domain/job-state.js";
import { NotFoundError } from "../errors.js";
import { type Actor, type Store, transact } from "../store.js";
import type { QueuePolicy } from "../domain/queue-policy.js";
import { lockedQueuePolicies } from "../queries/queue-policy.js";
import { invalidAt, parseInput } from "../validation/parse.js";
import { cappedPriority, podGroupRefusal } from "../validation/pod-group-policy.js";
import {
  normalisePodGroups,
  type PodGroupSpec,
  type ReportedPod,
  type ReportPodGroupsInput,
  reportPodGroupsInputSchema,
} from "../validation/pod-group-report.js";
import { bumpGeneration, lockCluster } from "./cluster-fence.js";
import { createGroupJob, endGroupJob } from "./pod-group-jobs.js";
import type { GroupJob } from "./pod-group-rows.js";
import { updateGroupJob } from "./pod-group-update.js";

interface GroupQueue {
  policy: QueuePolicy;
  /** The highest priority the queue's pod groups get. */
  priority: number;
}

/** Every group with pods must name an existing leaf queue. The rows are held (FOR KEY SHARE)
 * against concurrent tree changes, which hold FOR UPDATE while they change the tree. An empty
 * group (gone from the cluster) names no queue that matters: it is not checked. Returns each
 * named queue's policy and priority. */
async function checkQueues(tx: Tx, groups: readonly PodGroupSpec[]): Promise<Map<string, GroupQueue>> {
  const names = [...new Set(groups.filter((g) => g.pods.length).map((g) => g.queue))];
  if (!names.length) return new Map();
  const rows = await tx.$queryRaw<{ name: string; parent: boolean; priority: number }[]>`
    SELECT q.name, q.priority, EXISTS (SELECT 1 FROM queue c WHERE c.parent_name = q.name) AS parent
    FROM queue q WHERE q.name = ANY(${names}::text[]) FOR KEY SHARE OF q`;
  const found = new Map(rows.map((r) => [r.name, r]));
  groups.forEach((g, i) => {
    if (!g.pods.length) return;
    if (!found.has(g.queue)) throw invalidAt(["groups", i, "queue"], `queue "${g.queue}" does not exist`);
    if (found.get(g.queue)!.parent)
      throw invalidAt(["groups", i, "queue"], `queue "${g.queue}" has child queues; jobs go to leaf queues`);
  });
  // Locked FOR SHARE with their ancestors: a namespace change waits for the report, or is seen.
  const policies = await lockedQueuePolicies(
    tx,
    rows.map((r) => r.name),
  );
  const queues = new Map<string, GroupQueue>();
  for (const row of rows) {
    const policy = policies.get(row.name);
    if (policy) queues.set(row.name, { policy, priority: row.priority });
  }
  return queues;
}

/** The jobs made from this group, newest first, with their pods and tasks. */
function groupJobs(tx: Tx, cluster: string, g: PodGroupSpec) {
  return tx.job.findMany({
    where: { requestedCluster: cluster, namespace: g.namespace, name: g.name, createdInCluster: true },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    select: {
      id: true,
      name: true,
      queueName: true,
      state: true,
      priority: true,
      preemptible: true,
      minMember: true,
      pods: {
        select: { id: true, name: true, taskName: true, state: true, nodeName: true, clusterUid: true },
      },
      tasks: { select: { name: true, replicas: true } },
    },
  });
}

type JobPods = { pods: { name: string; clusterUid: string | null }[] };

/** The reported pods that are the group now: not those lingering in the cluster from a finished
 * job of the group (ended, not deleted: they stay with that job). A pod of such a name with
 * another uid was created again: it is a member. Members of the open job stay members. */
function currentPods(
  reported: readonly ReportedPod[],
  open: JobPods | null,
  finished: readonly JobPods[],
): ReportedPod[] {
  const members = new Set(open?.pods.map((p) => p.name));
  const lingering = new Map(finished.flatMap((j) => j.pods.map((p) => [p.name, p.clusterUid] as const)));
  return reported.filter((p) => {
    if (members.has(p.name) || !lingering.has(p.name)) return true;
    const uid = lingering.get(p.name);
    return Boolean(uid && p.uid && uid !== p.uid);
  });
}

/**
 * Per group: no unfinished job yet → a new job with the group's pods (pods of a finished job of
 * that group, still lingering in the cluster, stay with it); an unfinished job → its pods,
 * requests, queue, priority and gang minimum follow the report; `pods: []` → the group is gone
 * and its job ends (CANCELLED, unfinished pods FAILED). Returns how many groups changed a job.
 */
export async function reportPodGroups(
  store: Store,
  actor: Actor,
  input: ReportPodGroupsInput,
): Promise<number> {
  const r = parseInput(reportPodGroupsInputSchema, input);
  const groups = normalisePodGroups(r);
  const now = new Date();
  return transact(store, actor, async (tx, record) => {
    // The cluster row lock serialises the reports of a cluster: one job per group, never two.
    if (!(await lockCluster(tx, r.cluster))) throw new NotFoundError("cluster", r.cluster, "cluster");
    const queues = await checkQueues(tx, groups);
    let changed = 0;
    let fence = false;
    for (const asked of groups) {
      const queue = queues.get(asked.queue);
      const refused = queue && podGroupRefusal(asked, queue.policy);
      if (refused) {
        // One user's group must not fail the report of the whole cluster: it is refused alone.
        record({ kind: "podgroup.refused", queue: asked.queue, cluster: r.cluster, message: refused });
        continue;
      }
      const reported = queue ? cappedPriority(asked, queue.priority) : asked;
      const [latest, ...older] = await groupJobs(tx, r.cluster, reported);
      const open = latest && !isFinished(latest.state) ? latest : null;
      // Oldest first: the newest job that had a pod of a name has the last word on it.
      const finished = [...older].reverse().concat(latest && !open ? [latest] : []);
      const g = { ...reported, pods: currentPods(reported.pods, open, finished) };
      if (open) {
        const job: GroupJob = open;
        if (!g.pods.length) await endGroupJob(tx, r.cluster, job, g, now, record);
        else if (!(await updateGroupJob(tx, r.cluster, job, g, now, record))) continue;
        // Pods of a job the scheduler knows changed: a session planned before must not commit.
        fence = true;
        changed++;
      } else if (g.pods.length) {
        // A new job, like a submitted one, conflicts with no plan: the generation stays.
        await createGroupJob(tx, r.cluster, g, actor, now, record);
        changed++;
      }
    }
    if (fence) await bumpGeneration(tx, r.cluster);
    return changed;
  });
}
