// What admission's tests without a database build their fleets from: a ready cluster's summary
// and a job waiting for admission.
import type { PodGroupSpec } from "../../src/core/index.js";
import type { AdmissionCandidate, ClusterSummary } from "../../src/store/index.js";

/** A ready, uncordoned cluster without labels or pod-policy allowances. */
export const readyCluster = (name: string): ClusterSummary => ({
  name,
  labels: {},
  ready: true,
  lost: false,
  cordoned: false,
  podPolicy: { extendedResources: [], resourceClaims: false },
});

/** The job as a candidate: waiting on `cluster` (a re-admission candidate), or on none. */
export const candidateOf = (spec: PodGroupSpec, cluster: string | null = null): AdmissionCandidate => ({
  spec,
  cluster,
  clusterSelector: [],
  topologies: [],
  assignedAt: cluster ? new Date(spec.createdAt) : null,
  pendingReason: null,
  podNeeds: { extendedResources: [], resourceClaims: false },
});
