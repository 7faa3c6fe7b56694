// A simulated cluster plays the controllers of the workloads it runs (Job, JobSet, PyTorchJob,
// MPIJob): the object exists from its first pod's bind; a pod of a Job running in waves that
// succeeds is made again while completions remain (as the Job controller makes the next wave's
// pods); the object succeeds once every task has its completions, and fails when one of its
// pods fails (as a Job past its backoff limit, a JobSet past its failure policy, a training job
// whose replica failed do).
import type { RenderJob } from "../../../render/index.js";
import { type WorkloadKindName, workloadCompletions } from "../../../workload/index.js";
import type { PodStateChange, WorkloadStatusChange } from "../types.js";

interface TaskRuns {
  /** Pods that must succeed. */
  needed: number;
  /** Runs started: the task's pods, and each pod made again. */
  started: number;
  succeeded: number;
}

interface SimWorkload {
  kind: string;
  name: string;
  tasks: Map<string, TaskRuns>;
  ended: boolean;
}

/** The reason each kind's controller gives its end. */
const REASONS: Record<string, { succeeded: string; failed: string }> = {
  Job: { succeeded: "Complete", failed: "BackoffLimitExceeded" },
  JobSet: { succeeded: "AllJobsCompleted", failed: "FailedJobs" },
  PyTorchJob: { succeeded: "PyTorchJobSucceeded", failed: "PyTorchJobFailed" },
  MPIJob: { succeeded: "MPIJobSucceeded", failed: "MPIJobFailed" },
};

/** What a pod's end does to its workload: the object's end, or the pod made again. */
export interface WorkloadPodEnd {
  end: WorkloadStatusChange | null;
  again: PodStateChange | null;
}

const NOTHING: WorkloadPodEnd = { end: null, again: null };

/** "worker-3" → "worker". */
const taskOf = (pod: string) => pod.slice(0, Math.max(0, pod.lastIndexOf("-")));

export class SimulatedWorkloads {
  private readonly byJob = new Map<string, SimWorkload>();

  /** A pod of the job was bound: its object exists from then on. */
  bound(job: RenderJob): void {
    if (!job.workload || this.byJob.has(job.id)) return;
    const completions = workloadCompletions(
      job.workload.kind as WorkloadKindName,
      job.workload.manifest as Record<string, unknown>,
    );
    this.byJob.set(job.id, {
      kind: job.workload.kind,
      name: job.workload.name,
      tasks: new Map(
        job.tasks.map((t) => [
          t.name,
          { needed: completions.get(t.name) ?? t.replicas, started: t.replicas, succeeded: 0 },
        ]),
      ),
      ended: false,
    });
  }

  has(jobId: string): boolean {
    return this.byJob.has(jobId);
  }

  /** A pod of a workload ended. */
  podEnded(jobId: string, pod: string, state: "SUCCEEDED" | "FAILED"): WorkloadPodEnd {
    const w = this.byJob.get(jobId);
    const task = w?.tasks.get(taskOf(pod));
    if (!w || w.ended || !task) return NOTHING;
    const reasons = REASONS[w.kind] ?? { succeeded: "Succeeded", failed: "Failed" };
    if (state === "FAILED") {
      w.ended = true;
      const message = `pod ${pod} of ${w.kind} ${w.name} failed (simulated)`;
      return { end: { jobId, state: "FAILED", reason: reasons.failed, message }, again: null };
    }
    task.succeeded++;
    if (task.started < task.needed) {
      task.started++;
      const message = `made again by its controller: completion ${task.started} of ${task.needed}`;
      return { end: null, again: { jobId, pod, state: "PENDING", message, recreated: true } };
    }
    if ([...w.tasks.values()].some((t) => t.succeeded < t.needed)) return NOTHING;
    w.ended = true;
    const message = `${w.kind} ${w.name} completed (simulated)`;
    return { end: { jobId, state: "SUCCEEDED", reason: reasons.succeeded, message }, again: null };
  }

  /** The object is deleted. */
  delete(jobId: string): boolean {
    return this.byJob.delete(jobId);
  }
}
