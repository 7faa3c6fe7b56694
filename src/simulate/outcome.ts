// What a session left behind, as the scenario format reports it.
import { type Session, isAllocated } from "../core/index.js";

export interface Outcome {
  tasks: Record<
    string,
    {
      job: string;
      status: string;
      node: string | null;
      gpus: number;
      gpuGroups: string[];
      gpuDevices?: number[];
    }
  >;
  jobs: Record<string, { lastStartSecondsAgo: number | null; gpusAccepted: number; fitErrors: string[] }>;
  nodes: Record<string, { idleGpus: number; releasingGpus: number }>;
  binds: number;
  evictions: number;
  pipelines: number;
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;

export function outcomeOf(ssn: Session, fitErrors?: Map<string, string[]>): Outcome {
  const out: Outcome = {
    tasks: {},
    jobs: {},
    nodes: {},
    binds: ssn.binds.length,
    evictions: ssn.evictions.length,
    pipelines: ssn.pipelines.length,
  };
  for (const job of ssn.jobs.values()) {
    let accepted = 0;
    for (const p of job.pods) {
      accepted += p.acceptedGpus;
      out.tasks[p.name] = {
        job: job.name,
        status: p.status,
        node: p.nodeName,
        gpus: round(p.req.gpus),
        gpuGroups: [...p.gpuGroups],
        ...(p.gpuDevices.length ? { gpuDevices: [...p.gpuDevices] } : {}),
      };
    }
    out.jobs[job.name] = {
      lastStartSecondsAgo: job.lastStartAt === null ? null : round((ssn.now - job.lastStartAt) / 1000),
      gpusAccepted: round(accepted),
      fitErrors: fitErrors?.get(job.name) ?? [...job.fitErrors],
    };
  }
  for (const n of ssn.nodes)
    out.nodes[n.name] = { idleGpus: round(n.idleGpus()), releasingGpus: round(n.releasingGpus()) };
  return out;
}

/** A job has a task holding its resources now (the harness then stamps a recent start). */
export function hasAllocatedTask(ssn: Session, jobName: string): boolean {
  const job = [...ssn.jobs.values()].find((j) => j.name === jobName);
  return !!job && job.pods.some((p) => isAllocated(p.status));
}
