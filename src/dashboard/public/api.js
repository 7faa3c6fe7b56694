// Talking to the fleetq API from the browser: GraphQL over HTTP (fetch) and the queueEvents
// subscription over graphql-ws, both with the bearer token, on this page's own origin.
import { createClient } from "graphql-ws";

export class Unauthenticated extends Error {}

/** The token's budget is spent (RATE_LIMITED): `wait` seconds until its bucket is full again, so
 * that a whole load (four queries) fits, and never less than the API's retryAfter. */
export class RateLimited extends Error {
  constructor(message, extensions) {
    super(message);
    const { retryAfter = 1, remaining = 0, limit = 0, perSecond = 0 } = extensions;
    const refill = perSecond > 0 ? Math.ceil((limit - remaining) / perSecond) : 0;
    this.retryAfter = Math.max(Number(retryAfter) || 1, refill || 0);
  }
}

export async function gql(token, query, variables = {}) {
  const res = await fetch("/graphql", {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json().catch(() => null);
  const error = body?.errors?.[0];
  if (error) {
    if (error.extensions?.code === "UNAUTHENTICATED") throw new Unauthenticated(error.message);
    if (error.extensions?.code === "RATE_LIMITED") throw new RateLimited(error.message, error.extensions);
    throw new Error(error.message);
  }
  if (!res.ok || !body?.data) throw new Error(`HTTP ${res.status}`);
  return body.data;
}

/** Calls onEvent for every event; onStatus("live" | "offline") as the connection comes and goes.
 * `tokenOf` is asked at each (re)connection: a signed-in session's token changes as it refreshes. */
export function subscribeEvents(tokenOf, onEvent, onStatus) {
  const client = createClient({
    url: `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/graphql`,
    connectionParams: async () => ({ authorization: `Bearer ${await tokenOf()}` }),
    lazy: false,
    retryAttempts: Number.POSITIVE_INFINITY,
    shouldRetry: () => true,
    on: {
      connected: () => onStatus("live"),
      closed: () => onStatus("offline"),
    },
  });
  const unsubscribe = client.subscribe(
    { query: "subscription { queueEvents { id at kind message job queue cluster } }" },
    {
      next: (msg) => msg.data && onEvent(msg.data.queueEvents),
      error: () => onStatus("offline"),
      complete: () => onStatus("offline"),
    },
  );
  return () => {
    unsubscribe();
    client.dispose();
  };
}

const R = "{ cpu memory gpu gpuMemory }";

export const DASHBOARD_QUERY = `query Dashboard {
  me { name role queues }
  queues { name priority parent { name } }
  clusters { name state cordoned nodeCount capacity ${R} allocated ${R} }
  fairShare { queue cluster deserved ${R} fairShare ${R} allocated ${R} requested ${R} limit ${R} usage ${R} }
}`;

// Three small queries rather than one: the API's cost limit counts depth (graphql-armor).
export const PENDING_QUERY = `query Pending {
  pending: jobs(filter: { state: PENDING }, first: 50) { edges { node { id name createdAt requestedCluster
    labels { key value } queue { name } podStates { state count } pendingReason { message clusters { cluster message } }
    estimatedStart estimatedCluster } } }
}`;

export const SHORTFALL_QUERY = `query Shortfalls {
  shortfalls: jobs(filter: { state: PENDING }, first: 50) { edges { node { id
    pendingReason { clusters { cluster short { resource amount } } } } } }
}`;

export const RUNNING_QUERY = `query Running {
  running: jobs(filter: { state: RUNNING }, first: 50) { edges { node { id name startedAt
    labels { key value } queue { name } cluster { name } podStates { state count } } } }
}`;

/** One job for its page: what it is, where its pods are, why it waits. */
export const JOB_QUERY = `query Job($id: ID!) {
  job(id: $id) { id name state priority minMember createdAt startedAt finishedAt requestedCluster
    queue { name } cluster { name } labels { key value } restarts attempt expectedRuntimeSeconds
    estimatedStart estimatedCluster
    pendingReason { message clusters { cluster message short { resource amount } } }
    tasks { name replicas resources { gpu } }
    pods(first: 200) { name task state node gpuDevices gpuGroups resources { gpu } message exitCode
      startedAt finishedAt } }
}`;

// Apart from the job: events are the heaviest rows (query-cost.ts).
export const JOB_EVENTS_QUERY = `query JobEvents($id: ID!) {
  job(id: $id) { id events(first: 200) { id at kind message actor } }
}`;

export const POD_LOGS_QUERY = `query PodLogs($job: ID!, $pod: String!) {
  podLogs(job: $job, pod: $pod, tailLines: 500, timestamps: false)
}`;

export const CANCEL_JOB = `mutation Cancel($id: ID!) { cancelJob(id: $id) { id state } }`;

export const SHARE_HISTORY_QUERY = `query ShareHistory($queue: String!, $cluster: String!, $from: String!, $to: String!) {
  queueShareHistory(queue: $queue, cluster: $cluster, from: $from, to: $to) {
    at spanSeconds deserved ${R} fairShare ${R} allocated ${R} }
}`;

/** Who is signed in and the queue tree: what the job page decides its offers from. */
export const ME_QUERY = `query Me { me { name role queues } queues { name parent { name } } }`;

/** GPU-hours per period and group (groupBy: QUEUE, CLUSTER or none); a VIEWER may not group by
 * QUEUE. */
export const USAGE_QUERY = `query GpuHours($from: String!, $to: String!, $groupBy: [UsageGroup!]!, $step: UsageStep) {
  usageReport(from: $from, to: $to, groupBy: $groupBy, step: $step) {
    queue cluster periodStart allocated { gpuHours } used { gpuHours } }
}`;
