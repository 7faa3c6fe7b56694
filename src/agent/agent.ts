// The agent loop: proves its token, registers the cluster, starts the backend (which
// delivers the complete node inventory first, then changes), reports through the
// Reporter and consumes the cluster's bind queue. `runAgent` is what `fleetq agent` calls.
import { Redis, type RedisOptions } from "ioredis";
import { pino, type Logger } from "pino";
import type { Worker } from "bullmq";
import { createBackend, type BackendConfig } from "./backends/create-backend.js";
import { SimulatedBackend } from "./backends/simulated/simulated-backend.js";
import type { ClusterBackend } from "./backends/types.js";
import { DEFAULT_BACKOFF, backoffDelay, sleep } from "./backoff.js";
import { startBindConsumer } from "./bind-consumer.js";
import { ControlPlane } from "./control-plane.js";
import { ApiRejectedError, ApiUnavailableError, GraphQLClient, describe } from "./graphql-client.js";
import { OutcomeStore } from "./outcome-store.js";
import { Reporter } from "./reporter.js";
import { requestHandler } from "./request-handler.js";
import { JobSpecCache } from "./job-spec-cache.js";
import { BIND_QUEUE_PREFIX } from "../protocol/bind-request.js";
import { agentOutcomePrefix } from "../protocol/agent-redis-acl.js";
import { agentRequestKeys } from "../protocol/agent-requests.js";
import { RequestServer } from "./request-server.js";

export interface AgentOptions {
  cluster: string;
  /** The GraphQL endpoint, e.g. http://127.0.0.1:4000/graphql. */
  apiUrl: string;
  /** An AGENT-role token scoped to `cluster`. */
  token: string;
  /** Redis URL or ioredis options (BullMQ needs maxRetriesPerRequest null; set here). */
  redis: string | RedisOptions;
  /** Key prefix of the bind queues (default "bind"); tests use their own. */
  queuePrefix?: string;
  /** A backend to build, or a ready one (tests, `fleetq dev` sharing a simulated cluster). */
  backend: BackendConfig | ClusterBackend;
  /** Labels sent with registerCluster. */
  labels?: Record<string, string>;
  /** Call registerCluster at start (default true; a refusal is logged, not fatal). */
  register?: boolean;
  concurrency?: number;
  heartbeatSeconds?: number;
  batchWindowMs?: number;
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  maxStalledCount?: number;
  /** How long stop() waits for in-flight requests and reports before leaving them to the
   * next agent (they are re-delivered, not lost). */
  stopGraceMs?: number;
  logger?: Logger;
}

export interface RunningAgent {
  readonly backend: ClusterBackend;
  /** Bind requests refused because the control plane did not sign them. */
  readonly refusedRequests: number;
  stop(): Promise<void>;
}

/** The token is not what this agent needs: retrying will not help. */
export class AgentAuthError extends Error {
  override name = "AgentAuthError";
}

export async function runAgent(options: AgentOptions): Promise<RunningAgent> {
  const log = (options.logger ?? pino({ name: "fleetq-agent" })).child({ cluster: options.cluster });
  const controlPlane = new ControlPlane(
    new GraphQLClient({ url: options.apiUrl, token: options.token }),
    options.cluster,
  );
  await authenticate(controlPlane, log);
  const bindKey = await withApiRetry(() => controlPlane.bindKey(), "agentBindKey", log);
  const backend = isBackend(options.backend)
    ? options.backend
    : await createBackend(options.backend, options.cluster, log);
  if (options.register ?? true) await register(controlPlane, options.labels ?? backendLabels(backend), log);
  backend.useKey?.(bindKey);

  const reporter = new Reporter(
    controlPlane,
    {
      batchWindowMs: options.batchWindowMs ?? 50,
      // The API applies a batch in a fixed number of set-based statements: the bigger, the cheaper per report.
      maxBatch: 1000,
      heartbeatMs: (options.heartbeatSeconds ?? 15) * 1000,
      backoff: DEFAULT_BACKOFF,
    },
    log,
  );
  reporter.start();
  // BullMQ needs maxRetriesPerRequest null: commands wait for a reconnect, not fail.
  const connection =
    typeof options.redis === "string"
      ? new Redis(options.redis, { maxRetriesPerRequest: null })
      : new Redis({ ...options.redis, maxRetriesPerRequest: null });
  connection.on("error", (err) => log.warn({ err: err.message }, "redis connection error"));
  const stopSignal = new AbortController();
  const refused = { count: 0 };
  let worker: Worker;
  let requests: RequestServer;
  try {
    await backend.start({
      nodes: (nodes, complete, deleted) => reporter.nodes(nodes, complete, deleted),
      podStates: (changes) => reporter.podStateChanges(changes),
      externalPodGroups: (groups) => reporter.externalPodGroups(groups),
      podInventory: (inventory) => reporter.podInventory(inventory),
      workloadStatus: (changes) => reporter.workloadStatus(changes),
    });
    const jobs = new JobSpecCache(controlPlane);
    const outcomes = new OutcomeStore(
      connection,
      agentOutcomePrefix(options.cluster, options.queuePrefix ?? BIND_QUEUE_PREFIX),
      log,
    );
    worker = startBindConsumer(
      {
        connection,
        cluster: options.cluster,
        prefix: options.queuePrefix,
        concurrency: options.concurrency ?? backend.defaultConcurrency,
        lockDurationMs: options.lockDurationMs ?? 30_000,
        stalledIntervalMs: options.stalledIntervalMs ?? 15_000,
        maxStalledCount: options.maxStalledCount ?? 20,
        bindKey,
        refused,
      },
      requestHandler({
        cluster: options.cluster,
        backend,
        outcomes,
        reporter,
        jobs,
        signal: stopSignal.signal,
        log,
      }),
      log,
    );
    requests = new RequestServer({
      connection,
      keys: agentRequestKeys(options.cluster, options.queuePrefix ?? BIND_QUEUE_PREFIX),
      backend,
      jobs,
      log,
    });
    requests.start();
  } catch (err) {
    await reporter.stop();
    await backend.stop();
    connection.disconnect();
    throw err;
  }
  log.info({ backend: backend.kind }, "agent running");

  let stopping: Promise<void> | null = null;
  return {
    backend,
    get refusedRequests() {
      return refused.count;
    },
    stop: () => {
      stopSignal.abort();
      stopping ??= (async () => {
        await requests.stop();
        await shutdown(worker, reporter, backend, connection, options.stopGraceMs ?? 10_000, log);
      })();
      return stopping;
    },
  };
}

/** A simulated cluster file names the cluster's labels; Kubernetes clusters have none. */
function backendLabels(backend: ClusterBackend): Record<string, string> {
  return backend instanceof SimulatedBackend ? backend.labels : {};
}

function isBackend(value: BackendConfig | ClusterBackend): value is ClusterBackend {
  return typeof (value as ClusterBackend).bind === "function";
}

async function shutdown(
  worker: Worker,
  reporter: Reporter,
  backend: ClusterBackend,
  connection: Redis,
  graceMs: number,
  log: Logger,
): Promise<void> {
  // Stop taking work; give in-flight requests the grace period to finish reporting.
  const graceful = await Promise.race([worker.close().then(() => true), sleep(graceMs).then(() => false)]);
  if (!graceful) {
    log.warn("in-flight requests did not finish; leaving them to be re-delivered");
    await worker.close(true);
  }
  // Redis goes first: a request whose result is abandoned below must stay claimed (and be
  // re-delivered), never be marked failed or completed.
  connection.disconnect();
  await reporter.drained(graceMs);
  await reporter.stop();
  await backend.stop();
  log.info("agent stopped");
}

async function authenticate(controlPlane: ControlPlane, log: Logger): Promise<void> {
  const me = await withApiRetry(() => controlPlane.whoAmI(), "authenticate", log);
  if (me.role !== "AGENT" || me.cluster !== controlPlane.cluster) {
    throw new AgentAuthError(
      `the token belongs to ${me.name} (role ${me.role}, cluster ${me.cluster ?? "none"}); ` +
        `an agent of ${controlPlane.cluster} needs an AGENT token scoped to ${controlPlane.cluster}`,
    );
  }
}

async function register(
  controlPlane: ControlPlane,
  labels: Record<string, string>,
  log: Logger,
): Promise<void> {
  try {
    await withApiRetry(() => controlPlane.registerCluster(labels), "registerCluster", log);
  } catch (err) {
    // Admins may register clusters themselves and keep agents from doing it.
    if (!(err instanceof ApiRejectedError)) throw err;
    log.info({ err: err.message }, "registerCluster refused; assuming the cluster is registered");
  }
}

/** Retries while the API is unavailable (an agent may start before the API does). */
async function withApiRetry<T>(call: () => Promise<T>, what: string, log: Logger): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (err instanceof ApiRejectedError && err.code === "UNAUTHENTICATED") {
        throw new AgentAuthError(`the API refused the agent's token: ${err.message}`);
      }
      if (!(err instanceof ApiUnavailableError)) throw err;
      const delay = backoffDelay(attempt);
      log.warn({ err: describe(err), retryInMs: delay }, `${what}: API unavailable; retrying`);
      await sleep(delay);
    }
  }
}
