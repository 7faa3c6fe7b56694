// The store's public surface: what the API, workers, agents' reports and the CLI use. README.md
// lists each operation and query with its arguments.
export { DEFAULT_DATABASE_URL, openDatabase, type Database } from "./db.js";
export { createStore, type Actor, type Store, withEvents } from "./store.js";
export type {
  BindResultEventData,
  CycleEventData,
  EventData,
  EventSink,
  JobStartEventData,
  StoreEvent,
} from "./events.js";
export { RedisEventBus } from "./redis-events.js";
export {
  ConflictError,
  ForbiddenError,
  InvalidInputError,
  LeaseLostError,
  NotFoundError,
  StaleSnapshotError,
} from "./errors.js";
export { migrateDeploy } from "./migrate/index.js";

// Scheduling cycles: a cluster's snapshot, read in full or kept by a cache, and a session's commit.
export { loadSnapshot, type LoadedSnapshot } from "./snapshot/load-snapshot.js";
export { type CachedCluster, ClusterCache } from "./cache/cluster-cache.js";
export { commitSession, type CommitResult } from "./operations/commit-session.js";
export {
  acquireClusterLeases,
  clusterOwners,
  leaveWorkers,
  type OwnershipView,
  ownershipView,
  releaseClusterLeases,
  renewWorkerLeases,
} from "./operations/cluster-leases.js";

// Operations of the API (users and admins) and of the agents' reports.
export { createQueue, deleteQueue, setQueueQuota, updateQueue } from "./operations/queues.js";
export { cordonCluster, deleteCluster, registerCluster } from "./operations/clusters.js";
export { previewJob, submitJob } from "./operations/submit-job.js";
export { type PreviewedJob, previewCandidates, previewWorkloadCandidates } from "./queries/dry-run.js";
export { MAX_BATCH_JOBS, submitJobs } from "./operations/submit-jobs.js";
export { submitWorkload, submitWorkloads } from "./operations/submit-workload.js";
export { type ReportWorkloadStatusInput, reportWorkloadStatus } from "./operations/workload-status.js";
export { type SubmitWorkloadInput, workloadQueueOf } from "./validation/submit-workload.js";
export { assignJobCluster, cancelJob } from "./operations/jobs.js";
export { reportNodes } from "./operations/report-nodes.js";
export { reportBindResult, reportPodStatus } from "./operations/report-pods.js";
export { reportPodGroups } from "./operations/report-pod-groups.js";
export { reportPodInventory, type ReportPodInventoryInput } from "./operations/reconcile-pods.js";
export { jobTemplates } from "./queries/job-templates.js";
export { queueShareHistory } from "./queries/share-history.js";
export {
  MAX_SHARE_SAMPLES,
  SHARE_FOLD_SECONDS,
  SHARE_SAMPLE_SECONDS,
  type ShareSample,
} from "./domain/share-history.js";
export {
  bindRequestMessages,
  bindRequestsToDispatch,
  markBindRequestsDispatched,
  openBindRequests,
} from "./operations/dispatch.js";
export { recordQueueUsage } from "./operations/usage.js";
// Chargeback: usage samples and their hourly rollups (workers), prices and reports (API).
export {
  recordUsageSamples,
  rollUpUsage,
  type RollupReport,
  seedUsageRollups,
  setUsagePrice,
  type SetUsagePriceInput,
} from "./operations/chargeback.js";
export {
  type JobUsage,
  jobUsageOf,
  type UsagePrice,
  usagePrices,
  usageReport,
  type UsageReportRow,
} from "./queries/chargeback.js";
export {
  planUsageReport,
  type UsageGroup,
  type UsageReportInput,
  type UsageReportPlan,
  type UsageStep,
} from "./validation/usage-report.js";
export { DEFAULT_USAGE_RETENTION_DAYS, type ResourceHours } from "./domain/chargeback.js";
export { type QueueSharesRecord, recordQueueShares } from "./operations/share-history.js";
// Start-time estimates: what the estimator reads, what it writes, what the API shows.
export { replaceJobEstimates } from "./operations/job-estimates.js";
export {
  type JobEstimate,
  jobEstimatesOf,
  jobRuntimeHints,
  queueRuntimeSamples,
} from "./queries/estimates.js";
export {
  authenticate,
  createAdminToken,
  createToken,
  ensureAdminToken,
  hashSecret,
  personOf,
  revokeToken,
  type CreatedToken,
  type Principal,
} from "./operations/tokens.js";
export {
  createRoleBinding,
  type CreateRoleBindingInput,
  deleteRoleBinding,
  type Identity,
  listRoleBindings,
  principalOfIdentity,
} from "./operations/role-bindings.js";

// Webhooks: registering them (API), fanning events out and recording attempts (workers).
export {
  createWebhook,
  type DeliveryToSend,
  deleteWebhook,
  enableWebhook,
  fanOutWebhookEvents,
  pendingWebhookDeliveries,
  recordWebhookAttempt,
  webhookDeliveryToSend,
} from "./operations/webhooks.js";
export { type OverdueJob, reportOverdueStarts } from "./operations/start-promises.js";
export {
  listWebhooks,
  MAX_WEBHOOK_DELIVERIES_PAGE,
  webhookById,
  webhookDeliveries,
} from "./queries/webhooks.js";
export {
  type AttemptOutcome,
  DEFAULT_WEBHOOK_DISABLE_AFTER,
  matchesSelector,
  WEBHOOK_DELIVERY_LOG,
  WEBHOOK_EVENTS,
  WEBHOOK_SOURCE_KINDS,
  type WebhookEventName,
  type WebhookPayload,
} from "./domain/webhooks.js";
export { parseWebhookInput, type WebhookInput } from "./validation/webhook.js";

export type { PendingReason, ResourceAmount } from "./domain/pending-reason.js";
export { submitJobInputSchema, type SubmitJobInput } from "./validation/submit-job.js";
export type { ReportPodGroupsInput } from "./validation/pod-group-report.js";

// For the workers: admission, re-admission, bind backoff, cycle events, usage history.
export { reassignJobCluster } from "./operations/reassign-job.js";
export { recordEvents } from "./operations/record-events.js";
export {
  type AdmissionCandidate,
  admissionCandidatesByIds,
  type LabelMatch,
  readmissionCandidates,
  type UnadmittedJob,
  unadmittedJobs,
} from "./queries/admission.js";
export { pendingPodBindFailures, type BindFailure } from "./queries/bind-failures.js";
export { clusterIsLost, clusterSummaries, type ClusterSummary } from "./queries/clusters.js";
export { markLostClusters, type LostClusterReport } from "./operations/lost-clusters.js";
export { type RuntimeLimitReport, stopJobsPastRuntimeLimit } from "./operations/runtime-limits.js";
export { type ReleasedHolds, releaseRestartHolds } from "./operations/gang-restarts.js";
export { restartPolicyOf } from "./domain/gang-restart.js";
export {
  type ClusterCondition,
  clusterCondition,
  DEFAULT_CLUSTER_LOST_AFTER_MS,
} from "./domain/cluster-state.js";
export { type FairShareInput, fairShareInputs } from "./queries/fair-share.js";
export { DEFAULT_USAGE_WINDOW, type UsageWindow } from "./domain/usage.js";
export { shortAmounts } from "./domain/pending-reason.js";
export { assignJobClusters, setJobPendingReasons } from "./operations/admission-decisions.js";

// Queue policy: namespaces and pod security levels (effective, inherited down the tree).
export { FLEET_DEFAULT_REQUEST, ownNamespace, type QueuePolicy } from "./domain/queue-policy.js";
export { queuePolicies } from "./queries/queue-policy.js";
export {
  type ClusterPodPolicy,
  clusterPodPolicyOf,
  DEFAULT_QUEUE_POD_POLICY,
} from "./validation/pod-policy.js";
export { extendedResourcesOf, podPolicyRefusal } from "./validation/extended-resources.js";
export {
  DEFAULT_POD_SECURITY,
  type PodSecurityLevel,
  podSecurityViolation,
} from "./validation/pod-security/index.js";
export {
  bindRequestsOfJobs,
  jobPod,
  eventsOfJobs,
  MAX_BIND_REQUESTS_PAGE,
  MAX_EVENTS_PAGE,
  MAX_PODS_PAGE,
  podStatesOfJobs,
  podsOfJobs,
} from "./queries/job-details.js";
// For the API, the metrics and the CLI: the reads they need, their inputs and row types.
export {
  allocationByCluster,
  allocationByNode,
  bindRequestsOfCluster,
  capacityOfClusters,
  clustersNamed,
  databaseAnswers,
  dispatchBacklog,
  fleetSize,
  jobById,
  jobsById,
  jobsPage,
  listClusterRows,
  listQueues,
  listTokens,
  nodesOf,
  nodesPage,
  pendingPodsByQueue,
  startsPastEstimate,
  queueChildren,
  queueTreeRows,
  queuesNamed,
  quotasOf,
  tasksOf,
} from "./queries/reads.js";
export { type ClusterCapacity, type ResourceSum, zeroSum } from "./queries/allocation.js";
export { groupBy, naturalCompare } from "./collections.js";
export { QueueTree } from "./domain/queue-tree.js";
export { DEFAULT_QUOTA_SCOPE } from "./domain/quotas.js";
export { parseBytes } from "./domain/quantities.js";
export type {
  BindRequest,
  BindRequestState,
  Cluster,
  Job,
  JobState,
  JobTask,
  Node,
  Pod,
  Queue,
  QueueQuota,
  RoleBinding,
  Webhook,
  WebhookDelivery,
  WebhookDeliveryState,
} from "./types.js";
export type { SubGroupRow, TopologyConstraint } from "./validation/submit-job.js";
export type { CreateQueueInput, SetQueueQuotaInput, UpdateQueueInput } from "./operations/queues.js";
export type { RegisterClusterInput } from "./operations/clusters.js";
export type { ReportNodesInput } from "./operations/report-nodes.js";
export type { ReportBindResultInput, ReportPodStatusInput } from "./operations/report-pods.js";
export type { CreateTokenInput } from "./operations/tokens.js";
export { pruneHistory } from "./operations/prune-history.js";
