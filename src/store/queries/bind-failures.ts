// Failed binds of pods that wait to be placed again: the workers hold such a pod back for a
// while (backoff growing with the number of failures) before the scheduler may retry it.
import { prismaOf } from "../client.js";
import type { Store } from "../store.js";

export interface BindFailure {
  podId: string;
  jobId: string;
  /** Failed BIND requests of this pod so far. */
  failures: number;
  lastFailedAt: Date;
  lastError: string | null;
  lastNode: string;
}

/** Pods of `cluster` in state PENDING with failed BIND requests since their last successful one. */
export async function pendingPodBindFailures(store: Store, cluster: string): Promise<BindFailure[]> {
  const rows = await prismaOf(store).$queryRaw<
    {
      pod_id: string;
      job_id: string;
      failures: bigint;
      last_at: Date;
      last_error: string | null;
      last_node: string;
    }[]
  >`
    SELECT DISTINCT ON (b.pod_id) b.pod_id::text AS pod_id, b.job_id::text AS job_id,
           count(*) OVER (PARTITION BY b.pod_id) AS failures,
           b.completed_at AS last_at, b.last_error, b.node_name AS last_node
    FROM bind_request b JOIN pod p ON p.id = b.pod_id
    WHERE b.cluster_name = ${cluster} AND b.kind = 'BIND' AND b.state = 'FAILED' AND p.state = 'PENDING'
      AND NOT EXISTS (SELECT 1 FROM bind_request s WHERE s.pod_id = b.pod_id AND s.kind = 'BIND'
                      AND s.state = 'SUCCEEDED' AND s.created_at > b.created_at)
    ORDER BY b.pod_id, b.completed_at DESC`;
  return rows.map((r) => ({
    podId: r.pod_id,
    jobId: r.job_id,
    failures: Number(r.failures),
    lastFailedAt: r.last_at,
    lastError: r.last_error,
    lastNode: r.last_node,
  }));
}
