// Placing one job's attempt (KAI: actions/common/allocate.go): capacity check, then the
// sub-group tree top-down, each level split into candidate node sets (topology), each
// task on the first node in node order that fits; any failure rolls back the node set.
// Shared by allocate (real) and the victim solvers (pipeline only).
import type { NodeInfo } from "../../api/node-info.js";
import type { PodInfo } from "../../api/pod-info.js";
import type { JobInfo, PodSet, SubGroupSet } from "../../api/podgroup-info.js";
import { DEFAULT_SUB_GROUP } from "../../api/pod-info.js";
import { DEFAULT_POD_ERROR } from "../../framework/fit-errors.js";
import type { Session } from "../../framework/session.js";
import type { Statement } from "../../framework/statement.js";
import { allocateSharedGpuTask } from "./allocate-shared-gpu.js";
import { tasksToAllocate } from "../../framework/tasks-to-allocate.js";

export function allocateJob(
  ssn: Session,
  stmt: Statement,
  nodes: readonly NodeInfo[],
  job: JobInfo,
  pipelineOnly: boolean,
): boolean {
  ssn.preJobAllocation(job);
  const tasks = tasksToAllocate(ssn, job, !pipelineOnly);
  const cap = ssn.isJobOverQueueCapacity(job, tasks);
  if (!cap.schedulable) {
    if (!pipelineOnly) job.addFitError(cap.message ?? cap.reason ?? "job is over its queue's capacity");
    return false;
  }
  return allocateSubGroupSet(ssn, stmt, nodes, job, job.root, tasks, pipelineOnly);
}

function allocateSubGroupSet(
  ssn: Session,
  stmt: Statement,
  nodes: readonly NodeInfo[],
  job: JobInfo,
  set: SubGroupSet,
  tasks: readonly PodInfo[],
  pipelineOnly: boolean,
): boolean {
  // Without child sets, the set's own pod sets are all of them (no copy needed).
  const podSets = set.childSets.length === 0 ? set.podSets : set.allPodSets();
  const { sets, error } = ssn.subsetNodes(
    job,
    { name: set.name, topology: set.topology, podSets, set },
    tasks,
    nodes,
  );
  if (error) {
    if (!pipelineOnly) job.addFitError(error);
    return false;
  }
  for (const nodeSet of sets) {
    const cp = stmt.checkpoint();
    if (allocateSubGroupSetOnNodes(ssn, stmt, nodeSet, job, set, tasks, pipelineOnly)) return true;
    stmt.rollback(cp);
  }
  return false;
}

function allocateSubGroupSetOnNodes(
  ssn: Session,
  stmt: Statement,
  nodes: readonly NodeInfo[],
  job: JobInfo,
  set: SubGroupSet,
  tasks: readonly PodInfo[],
  pipelineOnly: boolean,
): boolean {
  // Runs once per attempt: the common single-pod-set job takes no copies (sorting one item
  // never consults the order; a task list all of one pod set is that pod set's list).
  if (set.childSets.length > 0) {
    const children = [...set.childSets].sort((a, b) => ssn.subGroupSetOrder(a, b));
    for (const child of children) {
      const names = new Set(child.allPodSets().map((p) => p.name));
      const childTasks = tasks.filter((t) => names.has(t.subGroup));
      if (!allocateSubGroupSet(ssn, stmt, nodes, job, child, childTasks, pipelineOnly)) return false;
    }
  }
  const podSets =
    set.podSets.length > 1 ? [...set.podSets].sort((a, b) => ssn.podSetOrder(a, b)) : set.podSets;
  for (const ps of podSets) {
    const psTasks = allOf(tasks, ps.name) ? tasks : tasks.filter((t) => t.subGroup === ps.name);
    if (!allocatePodSet(ssn, stmt, nodes, job, ps, psTasks, pipelineOnly)) return false;
  }
  return true;
}

/** Every task belongs to the named pod set. */
function allOf(tasks: readonly PodInfo[], subGroup: string): boolean {
  for (const t of tasks) if (t.subGroup !== subGroup) return false;
  return true;
}

function allocatePodSet(
  ssn: Session,
  stmt: Statement,
  nodes: readonly NodeInfo[],
  job: JobInfo,
  ps: PodSet,
  tasks: readonly PodInfo[],
  pipelineOnly: boolean,
): boolean {
  const { sets, error } = ssn.subsetNodes(
    job,
    { name: ps.name, topology: ps.topology, podSets: [ps], set: null },
    tasks,
    nodes,
  );
  if (error) {
    if (!pipelineOnly) job.addFitError(error);
    return false;
  }
  for (const nodeSet of sets) {
    const cp = stmt.checkpoint();
    if (allocateTasksOnNodeSet(ssn, stmt, nodeSet, job, tasks, pipelineOnly)) return true;
    stmt.rollback(cp);
  }
  return false;
}

function allocateTasksOnNodeSet(
  ssn: Session,
  stmt: Statement,
  nodes: readonly NodeInfo[],
  job: JobInfo,
  tasks: readonly PodInfo[],
  pipelineOnly: boolean,
): boolean {
  for (let i = 0; i < tasks.length; i++) {
    const task = tasks[i]!;
    if (!allocateTask(ssn, stmt, nodes, job, task, pipelineOnly)) {
      handleFailedTaskAllocation(ssn, job, task, i);
      return false;
    }
  }
  return true;
}

function allocateTask(
  ssn: Session,
  stmt: Statement,
  nodes: readonly NodeInfo[],
  job: JobInfo,
  task: PodInfo,
  pipelineOnly: boolean,
): boolean {
  const pre = ssn.prePredicate(task, job);
  if (pre) {
    ssn.fitErrorsFor(job, task).err = pre;
    return false;
  }
  const ordering = ssn.ordering;
  // A scan of every node that records why each refused: when one for the same request found
  // no room anywhere and every node changed since is still refused with the reasons recorded
  // for it, this one ends the same way (same records).
  const recordsAll = !pipelineOnly && nodes === ssn.nodes && task.nodeName === null;
  const known = recordsAll
    ? ordering.failedScans.find(task, (node) => ordering.roomRefusal(task, node))
    : null;
  if (known) {
    ssn.fitErrorsFor(job, task).setNodeErrors(known);
    return false;
  }
  const refusalsBefore = ordering.roomRefusals;
  const placed = ordering.firstFit(nodes, task, (node) => {
    // A simulation records no reasons: a node without room is passed over first (most are).
    if (pipelineOnly && !node.isTaskAllocatableOnReleasingOrIdle(task)) return false;
    // A pod moved earlier in the session is still releasing on its old node; placing it
    // there again would un-evict it where it now is, unchecked (KAI over-commits that node).
    // A pod on no node is on none (checked first: this runs for every node of every scan).
    if (task.nodeName !== null && task.nodeName !== node.name && node.pods.has(task.uid)) return false;
    if (!ordering.fits(task, job, node, !pipelineOnly)) return false;
    return allocateTaskToNode(ssn, stmt, task, node, pipelineOnly);
  });
  if (!placed && recordsAll && ordering.roomRefusals - refusalsBefore === nodes.length)
    ordering.failedScans.remember(task, ssn.fitErrorsFor(job, task).nodeErrors());
  return placed;
}

function allocateTaskToNode(
  ssn: Session,
  stmt: Statement,
  task: PodInfo,
  node: NodeInfo,
  pipelineOnly: boolean,
): boolean {
  if (task.req.isShared) return allocateSharedGpuTask(ssn, stmt, task, node, pipelineOnly);
  if (!pipelineOnly && node.isTaskAllocatable(task)) {
    stmt.allocate(task, node.name);
    return true;
  }
  stmt.pipeline(task, node.name, !pipelineOnly);
  return true;
}

function handleFailedTaskAllocation(ssn: Session, job: JobInfo, task: PodInfo, placed: number): void {
  const errors = ssn.taskFitErrorsOf(job, task);
  const why = errors ? errors.message() : DEFAULT_POD_ERROR;
  const gang = job.podSetList.some((ps) => ps.minAvailable > 1);
  const ps = job.podSetOf(task);
  if (!gang || ps.activeUsed >= ps.minAvailable) {
    job.addFitError(`Resources were not found for pod ${task.namespace}/${task.name} due to: ${why}`);
    return;
  }
  if (job.podSetList.length === 1 && ps.name === DEFAULT_SUB_GROUP) {
    job.addFitError(
      `Resources were found for ${placed} pods while ${ps.minAvailable} are required for gang scheduling. ` +
        `Additional pods cannot be scheduled due to: ${why}`,
    );
    return;
  }
  job.addFitError(
    `Resources were found for ${placed} pods from all sub-groups while sub-group ${ps.name} requires ` +
      `${ps.minAvailable} pods for gang scheduling. Additional pods cannot be scheduled in this sub-group due to: ${why}`,
  );
}
