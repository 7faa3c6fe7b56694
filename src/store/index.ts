// The store's public surface: what the API, workers, agents' reports and the CLI use.
export { DEFAULT_DATABASE_URL, openDatabase, type Database, type PrismaClient, type Tx } from "./db.js";
export { createStore, transact, type Actor, type Store } from "./store.js";
export { discardEvents, type EventSink, type NewEvent, type StoreEvent } from "./events.js";
export { RedisEventBus, type EventListener } from "./redis-events.js";
export {
  ConflictError,
  ForbiddenError,
  InvalidInputError,
  NotFoundError,
  StaleSnapshotError,
} from "./errors.js";
export { migrateDeploy } from "./migrate/index.js";

export { loadSnapshot, snapshotJobFilter, type LoadedSnapshot } from "./snapshot/load-snapshot.js";
export { commitSession, type CommitResult } from "./operations/commit-session.js";

export { createQueue, deleteQueue, setQueueQuota, updateQueue } from "./operations/queues.js";
export { cordonCluster, deleteCluster, registerCluster } from "./operations/clusters.js";
export { submitJob, type SubmitResult } from "./operations/submit-job.js";
export { assignJobCluster, cancelJob, setJobPendingReason, type CancelResult } from "./operations/jobs.js";
export { reportNodes } from "./operations/report-nodes.js";
export { reportBindResult, reportPodStatus } from "./operations/report-pods.js";
export { reportPodGroups } from "./operations/report-pod-groups.js";
export {
  bindRequestMessages,
  bindRequestsToDispatch,
  markBindRequestsDispatched,
} from "./operations/dispatch.js";
export { recordQueueUsage, type UsageRecord } from "./operations/usage.js";
export {
  authenticate,
  createAdminToken,
  createToken,
  ensureAdminToken,
  hashSecret,
  revokeToken,
  type CreatedToken,
  type Principal,
} from "./operations/tokens.js";

export { deriveJobState } from "./domain/job-state.js";
export type { ClusterShortfall, PendingReason, ResourceAmount } from "./domain/pending-reason.js";
export { submitJobInputSchema, type JobSpec, type SubmitJobInput } from "./validation/submit-job.js";
export type { ReportPodGroupsInput } from "./validation/pod-group-report.js";
export type { BindRequest, Job, Pod } from "./generated/prisma/client.js";

// For the workers (issue 5): admission, re-admission, bind backoff, cycle events, usage history.
export { reassignJobCluster } from "./operations/reassign-job.js";
export { recordEvents } from "./operations/record-events.js";
export {
  admissionCandidates,
  type AdmissionCandidate,
  type AdmissionCursor,
  type AdmissionQuery,
  cursorOf,
  type LabelMatch,
} from "./queries/admission.js";
export { pendingPodBindFailures, type BindFailure } from "./queries/bind-failures.js";
export { clusterGeneration, hasPendingPods, listClusters, type ClusterSummary } from "./queries/clusters.js";
export { fairShareConfig, fairShareRows, type FairShareRow } from "./queries/fair-share.js";
export { DEFAULT_USAGE_WINDOW, type UsageWindow } from "./domain/usage.js";
export { awaitingAdmission, shortAmounts } from "./domain/pending-reason.js";
export { assignJobClusters, setJobPendingReasons } from "./operations/admission-decisions.js";

// Queue policy: namespaces and pod security levels (effective, inherited down the tree).
export { DEFAULT_NAMESPACES, type QueuePolicy } from "./domain/queue-policy.js";
export { queuePolicies, queuePolicy } from "./queries/queue-policy.js";
export {
  DEFAULT_POD_SECURITY,
  POD_SECURITY_LEVELS,
  type PodSecurityLevel,
  podSecurityViolation,
} from "./validation/pod-security/index.js";
export {
  bindRequestsOfJobs,
  eventsOfJobs,
  MAX_BIND_REQUESTS_PAGE,
  MAX_EVENTS_PAGE,
  MAX_PODS_PAGE,
  podsOfJobs,
} from "./queries/job-details.js";
export { pruneHistory, type PruneReport } from "./operations/prune-history.js";
