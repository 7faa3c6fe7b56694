// A forecast of the jobs still to come, for the start-time estimator: the recent past repeats. The
// jobs submitted to the cluster in the last `windowMs` are expected again, each `windowMs` after
// its own submission (and again every `windowMs` up to the horizon), with the same shape, queue,
// priority and run time. Waiting jobs are then estimated to let pass the jobs that would overtake
// them (a queue below its fair share, a higher priority), as they did in the recent past.
import type { PodGroupSpec } from "../core/index.js";
import type { JobRuntime } from "./estimate-starts.js";

export interface RecentJob {
  /** When it was submitted (ms). */
  at: number;
  job: PodGroupSpec;
  runtime?: JobRuntime;
}

export interface Forecast {
  arrivals: { at: number; job: PodGroupSpec }[];
  runtimes: Map<string, JobRuntime>;
}

/** The forecast of the jobs to arrive in (now, now + horizonMs]. */
export function forecastArrivals(
  recent: readonly RecentJob[],
  now: number,
  windowMs: number,
  horizonMs: number,
): Forecast {
  const arrivals: Forecast["arrivals"] = [];
  const runtimes = new Map<string, JobRuntime>();
  if (windowMs <= 0) return { arrivals, runtimes };
  const window = recent.filter((r) => r.at > now - windowMs && r.at <= now);
  for (let k = 1; k * windowMs - windowMs < horizonMs; k++) {
    for (const r of window) {
      const at = r.at + k * windowMs;
      if (at <= now || at > now + horizonMs) continue;
      const uid = `forecast:${k}:${r.job.uid}`;
      arrivals.push({
        at,
        job: {
          ...r.job,
          uid,
          name: uid,
          createdAt: at,
          lastStartAt: null,
          staleSince: null,
          pods: r.job.pods.map((p) => ({
            ...p,
            uid: `${uid}/${p.uid}`,
            status: "Pending",
            node: null,
            gpuGroups: [],
            gpuDevices: undefined,
            nominatedNode: null,
            createdAt: at,
          })),
        },
      });
      if (r.runtime) runtimes.set(uid, r.runtime);
    }
  }
  arrivals.sort((a, b) => a.at - b.at);
  return { arrivals, runtimes };
}
