// The agent's BullMQ worker on its cluster's queue (`bind:<cluster>`). A job completes
// only after its result reached the API; until then BullMQ holds it, and a crashed agent's
// jobs are re-delivered (stalled) to the next agent, whose backend re-executes them
// idempotently. That is how a request is never lost and its effect never doubled.
// A message is acted on only if the control plane signed it with this cluster's key: whoever
// else can write to the queue (Redis) cannot make the agent create, bind, evict or delete anything.
import { UnrecoverableError, Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import {
  BIND_QUEUE_PREFIX,
  bindQueueName,
  type BindRequestMessage,
  bindRequestSignatureValid,
} from "../protocol/bind-request.js";
import { parseBindRequest } from "./bind-request-message.js";

export interface BindConsumerOptions {
  connection: Redis;
  cluster: string;
  /** Redis key prefix of the bind queues; "bind" unless tests isolate themselves. */
  prefix?: string;
  concurrency: number;
  /** How long a job stays claimed without lock renewal: bounds how soon a dead agent's
   * jobs are re-delivered. */
  lockDurationMs: number;
  stalledIntervalMs: number;
  /** Restarts a job may survive before BullMQ gives up on it; agent restarts are normal. */
  maxStalledCount: number;
  /** The cluster's BindRequest key (agentBindKey): messages not signed with it are refused. */
  bindKey: string;
  /** Counts the refused messages (forged, altered, or signed for another cluster). */
  refused?: { count: number };
}

export function startBindConsumer(
  options: BindConsumerOptions,
  handle: (request: BindRequestMessage) => Promise<void>,
  log: Logger,
): Worker {
  const worker = new Worker(
    bindQueueName(options.cluster),
    async (job) => {
      if (!bindRequestSignatureValid(job.data, options.bindKey)) {
        if (options.refused) options.refused.count++;
        log.error(
          { jobId: job.id, refused: options.refused?.count },
          "refusing a bind request the control plane did not sign (forged or altered in Redis)",
        );
        throw new UnrecoverableError("the bind request's signature does not match this cluster's key");
      }
      let request: BindRequestMessage;
      try {
        request = parseBindRequest(job.data);
      } catch (err) {
        log.error({ jobId: job.id, err: (err as Error).message }, "dropping a malformed bind request");
        throw new UnrecoverableError((err as Error).message);
      }
      await handle(request);
    },
    {
      connection: options.connection,
      prefix: options.prefix ?? BIND_QUEUE_PREFIX,
      concurrency: options.concurrency,
      lockDuration: options.lockDurationMs,
      stalledInterval: options.stalledIntervalMs,
      maxStalledCount: options.maxStalledCount,
      // Completed requests are already recorded by the API; keep Redis small.
      removeOnComplete: { count: 1000 },
    },
  );
  // Without an 'error' listener an EventEmitter error would crash the process; Redis
  // outages surface here and ioredis reconnects by itself.
  worker.on("error", (err) => log.warn({ err: err.message }, "bind queue worker error"));
  worker.on("stalled", (jobId) =>
    log.info({ jobId }, "re-delivering a bind request left by a stopped agent"),
  );
  return worker;
}
