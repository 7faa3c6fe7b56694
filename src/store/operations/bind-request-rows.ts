// Creating BindRequest rows (the outbox): committed with the decision, dispatched afterwards.
import type { Tx } from "../db.js";
import type { BindRequest } from "../generated/prisma/client.js";

export interface NewBindRequest {
  kind: "BIND" | "EVICT";
  cluster: string;
  jobId: string;
  podId: string;
  node: string;
  gpuGroups: string[];
  reason: string;
}

export async function createBindRequests(
  tx: Tx,
  requests: readonly NewBindRequest[],
  generation: number,
): Promise<BindRequest[]> {
  if (!requests.length) return [];
  return tx.bindRequest.createManyAndReturn({
    data: requests.map((r) => ({
      kind: r.kind,
      clusterName: r.cluster,
      jobId: r.jobId,
      podId: r.podId,
      nodeName: r.node,
      gpuGroups: r.gpuGroups,
      reason: r.reason,
      generation: BigInt(generation),
    })),
  });
}
