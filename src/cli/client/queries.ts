// The GraphQL documents the CLI sends.
const RESOURCES = "{ cpu memory gpu gpuMemory }";

/** A job without its pods: their counts by state only (a pod row weighs 10 in the API's cost). */
export const JOB_SUMMARY_FIELDS = `id name state queue { name } cluster { name } requestedCluster priority minMember
  createdAt startedAt finishedAt submittedBy labels { key value } maxRuntimeSeconds expectedRuntimeSeconds
  restarts attempt podStates { state count }
  pendingReason { message clusters { cluster message short { resource amount } } }`;
/** A job with its first 100 pods. */
export const JOB_FIELDS = `${JOB_SUMMARY_FIELDS} pods { name state node task message exitCode }`;

export const SUBMIT_JOB = `mutation Submit($input: SubmitJobInput!) { submitJob(input: $input) { ${JOB_FIELDS} warnings } }`;
/** What a batch submission answers with, per job: the API counts its cost once per input (up to
 * 1,000 jobs a call), so only what identifies the job and where it stands. */
export const SUBMITTED_JOB_FIELDS = `id name state queue { name } cluster { name } requestedCluster priority minMember
  createdAt podStates { state count }`;
export const SUBMIT_JOBS = `mutation SubmitMany($inputs: [SubmitJobInput!]!) { submitJobs(inputs: $inputs) { ${SUBMITTED_JOB_FIELDS} warnings } }`;
export const SUBMIT_WORKLOAD = `mutation SubmitWorkload($input: SubmitWorkloadInput!) { submitWorkload(input: $input) { ${JOB_FIELDS} warnings } }`;
export const SUBMIT_WORKLOADS = `mutation SubmitWorkloads($inputs: [SubmitWorkloadInput!]!) { submitWorkloads(inputs: $inputs) { ${SUBMITTED_JOB_FIELDS} warnings } }`;
export const GET_JOB = `query Job($id: ID!) { job(id: $id) { ${JOB_FIELDS} events { at kind message actor }
  estimatedStart estimatedCluster } }`;
export const JOB_UPDATED = `subscription JobUpdated($id: ID!) { jobUpdated(id: $id) { ${JOB_FIELDS} } }`;
export const CANCEL_JOB = `mutation Cancel($id: ID!) { cancelJob(id: $id) { ${JOB_FIELDS} } }`;

/** Pages of jobs: LIST_JOBS (without their pods) at most LIST_JOBS_PAGE a page,
 * LIST_JOBS_WITH_PODS at most LIST_JOBS_WITH_PODS_PAGE (the API's cost limit). */
export const LIST_JOBS = `query Jobs($filter: JobFilter, $first: Int, $after: String) {
  jobs(filter: $filter, first: $first, after: $after) {
    edges { node { ${JOB_SUMMARY_FIELDS} } }
    pageInfo { hasNextPage endCursor }
  } }`;
export const LIST_JOBS_PAGE = 100;
export const LIST_JOBS_WITH_PODS = `query JobsWithPods($filter: JobFilter, $first: Int, $after: String) {
  jobs(filter: $filter, first: $first, after: $after) {
    edges { node { ${JOB_FIELDS} } }
    pageInfo { hasNextPage endCursor }
  } }`;
export const LIST_JOBS_WITH_PODS_PAGE = 17;

/** What `wait` follows: the states of jobs (by labels), a page at a time. */
export const LIST_JOB_STATES = `query JobStates($filter: JobFilter, $first: Int, $after: String) {
  jobs(filter: $filter, first: $first, after: $after) {
    edges { node { id name state } }
    pageInfo { hasNextPage endCursor }
  } }`;
export const GET_JOB_STATE = `query JobState($id: ID!) { job(id: $id) { id name state } }`;

export const QUEUE_FIELDS =
  "name priority parent { name } quotas { cluster resource deserved limit overQuotaWeight }";
export const LIST_QUEUES = `query { queues { ${QUEUE_FIELDS} } }`;
export const CREATE_QUEUE = `mutation($input: CreateQueueInput!) { createQueue(input: $input) { ${QUEUE_FIELDS} } }`;
export const UPDATE_QUEUE = `mutation($name: String!, $input: UpdateQueueInput!) {
  updateQueue(name: $name, input: $input) { ${QUEUE_FIELDS} } }`;
export const SET_QUOTA = `mutation($input: SetQueueQuotaInput!) { setQueueQuota(input: $input) { ${QUEUE_FIELDS} } }`;

export const LIST_CLUSTERS = `query { clusters { name state cordoned heartbeatAt owner { worker since } labels { key value } nodeCount
  capacity ${RESOURCES} allocated ${RESOURCES} } }`;
/** A cluster with its first GET_CLUSTER_NODES_PAGE nodes; CLUSTER_NODES for the next pages. */
export const GET_CLUSTER = `query($name: String!, $first: Int) { cluster(name: $name) { name state cordoned heartbeatAt owner { worker since }
  labels { key value } capacity ${RESOURCES} allocated ${RESOURCES} nodeCount
  nodes(first: $first) { name gpuModel unschedulable ready capacity ${RESOURCES} allocated ${RESOURCES} } } }`;
export const CLUSTER_NODES = `query($name: String!, $first: Int, $after: String) { cluster(name: $name) {
  nodes(first: $first, after: $after) { name gpuModel unschedulable ready capacity ${RESOURCES} allocated ${RESOURCES} } } }`;
export const GET_CLUSTER_NODES_PAGE = 1_000;
export const REGISTER_CLUSTER = `mutation($input: RegisterClusterInput!) { registerCluster(input: $input) { name } }`;

export const FAIR_SHARE = `query FairShare($cluster: String) { fairShare(cluster: $cluster) {
  queue cluster deserved ${RESOURCES} fairShare ${RESOURCES} allocated ${RESOURCES}
  requested ${RESOURCES} limit ${RESOURCES} usage ${RESOURCES} } }`;

export const CREATE_TOKEN = `mutation($input: CreateTokenInput!) { createToken(input: $input) { id secret } }`;
export const REVOKE_TOKEN = `mutation($id: ID!) { revokeToken(id: $id) }`;
export const LIST_TOKENS =
  "query { tokens { id name role queues cluster subject createdBy createdAt revokedAt } }";
export const CREATE_ROLE_BINDING = `mutation($input: RoleBindingInput!) {
  createRoleBinding(input: $input) { id subject group role queues createdBy createdAt }
}`;
export const DELETE_ROLE_BINDING = `mutation($id: ID!) { deleteRoleBinding(id: $id) }`;
export const LIST_ROLE_BINDINGS =
  "query { roleBindings { id subject group role queues createdBy createdAt } }";
const WEBHOOK_FIELDS =
  "id url events queues labels { key values } allowPrivateTargets enabled disabledReason consecutiveFailures createdBy createdAt";
export const CREATE_WEBHOOK = `mutation($input: WebhookInput!) { createWebhook(input: $input) { ${WEBHOOK_FIELDS} secret } }`;
export const LIST_WEBHOOKS = `query { webhooks { ${WEBHOOK_FIELDS} } }`;
export const DELETE_WEBHOOK = "mutation($id: ID!) { deleteWebhook(id: $id) }";
export const ENABLE_WEBHOOK = `mutation($id: ID!) { enableWebhook(id: $id) { ${WEBHOOK_FIELDS} } }`;
export const WEBHOOK_DELIVERIES = `query($webhook: ID!, $state: WebhookDeliveryState, $first: Int) {
  webhookDeliveries(webhook: $webhook, state: $state, first: $first) {
    id event eventId job state attempts responseCode error createdAt lastAttemptAt finishedAt
  }
}`;
export const ME = "query { me { name role queues cluster } }";
/** `fleetq whoami`: the principal with the person behind it. */
export const WHOAMI = "query { me { name role queues cluster subject email } }";

export const CLUSTER_SCENARIO = "query($cluster: String!) { clusterScenario(cluster: $cluster) }";
export const WHAT_IF = `query WhatIf($cluster: String!, $quotas: [WhatIfQuotaInput!], $config: JSON) {
  whatIf(cluster: $cluster, quotas: $quotas, config: $config) {
    cluster
    starts { job name queue pods nodes }
    pipelined { job name queue pods nodes }
    evictions { job name queue pod node action message }
    queues { queue deservedBefore ${RESOURCES} deservedAfter ${RESOURCES} fairShareBefore ${RESOURCES}
      fairShareAfter ${RESOURCES} allocatedBefore ${RESOURCES} allocatedAfter ${RESOURCES} } } }`;

/** The pods a `logs` command chooses from: the job's tasks in spec order, and (priced by the page
 * asked for: `first` is the job's size) where its pods stand. */
export const JOB_TASKS = `query JobTasks($id: ID!) { job(id: $id) { id name state restarts tasks { name replicas } } }`;
export const JOB_POD_STATES = `query JobPodStates($id: ID!, $first: Int) { job(id: $id) { id name state restarts
  tasks { name replicas } pods(first: $first) { name task state } } }`;
export const POD_LOGS = `query PodLogs($job: ID!, $pod: String!, $tailLines: Int, $sinceSeconds: Int, $previous: Boolean,
  $timestamps: Boolean) { podLogs(job: $job, pod: $pod, tailLines: $tailLines, sinceSeconds: $sinceSeconds,
  previous: $previous, timestamps: $timestamps) }`;
export const POD_LOG_LINES = `subscription PodLogLines($job: ID!, $pod: String!, $tailLines: Int, $sinceSeconds: Int,
  $timestamps: Boolean) { podLogLines(job: $job, pod: $pod, tailLines: $tailLines, sinceSeconds: $sinceSeconds,
  timestamps: $timestamps) { line end } }`;
export const RENDER_JOB = `query Render($input: SubmitJobInput!, $cluster: String) { renderJob(input: $input, cluster: $cluster) }`;
export const JOB_EVENTS = `query JobEvents($id: ID!) { job(id: $id) { events(first: 1000) { kind message } } }`;

const USAGE_HOURS = "{ gpuHours cpuCoreHours memoryGiBHours }";
export const USAGE_REPORT = `query Usage($from: String!, $to: String!, $groupBy: [UsageGroup!]!, $labelKey: String,
  $step: UsageStep) { usageReport(from: $from, to: $to, groupBy: $groupBy, labelKey: $labelKey, step: $step) {
  queue cluster gpuModel label periodStart periodEnd allocated ${USAGE_HOURS} used ${USAGE_HOURS} cost } }`;
const DRY_RUN_FIELDS = `name queue cluster named tier message estimatedStart estimatedCluster
  clusters { cluster chosen candidate message short { resource amount } estimatedStart estimated }
  evictions { job name queue cluster pods action message at now }`;
export const DRY_RUN_SUBMIT = `query DryRunSubmit($input: SubmitJobInput!) { dryRunSubmit(input: $input) { ${DRY_RUN_FIELDS} } }`;
export const DRY_RUN_SUBMIT_JOBS = `query DryRunSubmitJobs($inputs: [SubmitJobInput!]!) { dryRunSubmitJobs(inputs: $inputs) { ${DRY_RUN_FIELDS} } }`;
export const DRY_RUN_SUBMIT_WORKLOAD = `query DryRunSubmitWorkload($input: SubmitWorkloadInput!) { dryRunSubmitWorkload(input: $input) { ${DRY_RUN_FIELDS} } }`;
export const DRY_RUN_SUBMIT_WORKLOADS = `query DryRunSubmitWorkloads($inputs: [SubmitWorkloadInput!]!) { dryRunSubmitWorkloads(inputs: $inputs) { ${DRY_RUN_FIELDS} } }`;
