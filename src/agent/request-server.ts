// The agent's answers to the API's reads of its cluster (protocol/agent-requests.ts): it pops
// requests from the cluster's request list on a connection of its own (a blocking pop holds it)
// and answers each on the request's stream, in pieces of whole lines written at most every few
// milliseconds, within the stream limits (10 MiB, an hour). A followed stream stops when its
// asker's live key is gone.
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { z } from "zod";
import {
  type AgentRequestKeys,
  entryFields,
  HEARTBEAT_MS,
  LIVE_RENEW_MS,
  LOG_LIMIT_BYTES,
  LOG_LIMIT_MS,
  type LogRequest,
  REPLY_TTL_SECONDS,
  REQUEST_TTL_MS,
  type ReplyEntry,
} from "../protocol/agent-requests.js";
import { sleep } from "./backoff.js";
import { type ClusterBackend, LogError, type LogSink } from "./backends/types.js";
import type { JobSpecCache } from "./job-spec-cache.js";

/** Requests answered at once; more wait in the list. */
const MAX_ACTIVE = 64;
/** A piece of an answer is sent when it is this big, or FLUSH_MS after its first line. */
const PIECE_BYTES = 64 * 1024;
const FLUSH_MS = 10;

const logRequest = z.object({
  id: z.string().regex(/^[A-Za-z0-9-]{1,64}$/),
  kind: z.literal("logs"),
  sentAt: z.number(),
  job: z.object({
    id: z.string().min(1),
    name: z.string(),
    namespace: z.string(),
    createdInCluster: z.boolean(),
  }),
  pod: z.string().min(1),
  restarts: z.int().min(0),
  tailLines: z.int().min(0).nullable(),
  sinceSeconds: z.int().min(1).nullable(),
  timestamps: z.boolean(),
  follow: z.boolean(),
});

export interface RequestServerDeps {
  /** The agent's connection: answers are written on it (the server pops on a duplicate of its own,
   * which a blocking pop holds while it waits). */
  connection: Redis;
  keys: AgentRequestKeys;
  backend: ClusterBackend;
  jobs: JobSpecCache;
  log: Logger;
}

export class RequestServer {
  private readonly stopped = new AbortController();
  private readonly active = new Set<Promise<void>>();
  private loop: Promise<void> | null = null;
  private readonly popper: Redis;
  /** Settles (with null) once stop() is called. */
  private readonly stopping = new Promise<null>((resolve) =>
    this.stopped.signal.addEventListener("abort", () => resolve(null), { once: true }),
  );

  constructor(private readonly deps: RequestServerDeps) {
    this.popper = deps.connection.duplicate();
    this.popper.on("error", () => {}); // reconnects; the loop logs failed pops
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped.abort();
    this.popper.disconnect();
    await this.loop;
    await Promise.allSettled([...this.active]);
  }

  private async run(): Promise<void> {
    const { keys, log } = this.deps;
    const connection = this.popper;
    while (!this.stopped.signal.aborted) {
      if (this.active.size >= MAX_ACTIVE) {
        await Promise.race(this.active);
        continue;
      }
      let popped: [string, string] | null;
      try {
        // A pop waiting for a reconnect may never settle once the connection is closed.
        popped = await Promise.race([connection.blpop(keys.requests, 1), this.stopping]);
      } catch (err) {
        if (this.stopped.signal.aborted) return;
        log.warn({ err: (err as Error).message }, "cannot read the API's requests; retrying");
        await sleep(1000, this.stopped.signal).catch(() => {});
        continue;
      }
      if (!popped) continue;
      const request = parseRequest(popped[1]);
      if (!request) {
        log.warn("dropped a malformed request of the API");
        continue;
      }
      if (Date.now() - request.sentAt > REQUEST_TTL_MS) continue;
      const answering = this.answer(request).finally(() => this.active.delete(answering));
      this.active.add(answering);
    }
  }

  private async answer(request: LogRequest): Promise<void> {
    const reply = new ReplyWriter(this.deps.connection, this.deps.keys.reply(request.id));
    // Why the stream is cut short, as its last entry says it.
    const done = new AbortController();
    const stop = () => done.abort("the agent stopped");
    this.stopped.signal.addEventListener("abort", stop, { once: true });
    const limit = setTimeout(() => done.abort("the stream's limit of an hour was reached"), LOG_LIMIT_MS);
    const watch = request.follow ? this.watchAsker(request, done) : null;
    const heartbeat = request.follow
      ? setInterval(() => void reply.heartbeat().catch(() => {}), HEARTBEAT_MS)
      : null;
    let end: ReplyEntry;
    try {
      const reason = await this.readLogs(request, reply, done.signal);
      end = { kind: "end", reason: done.signal.aborted ? String(done.signal.reason) : reason };
    } catch (err) {
      end = reply.limitReached
        ? { kind: "end", reason: `the stream's limit of ${LOG_LIMIT_BYTES / 1024 / 1024} MiB was reached` }
        : done.signal.aborted
          ? { kind: "end", reason: String(done.signal.reason) }
          : err instanceof LogError
            ? { kind: "error", message: err.message, code: err.code }
            : { kind: "error", message: `cannot read the log: ${(err as Error).message}`, code: "failed" };
    } finally {
      clearTimeout(limit);
      if (heartbeat) clearInterval(heartbeat);
      this.stopped.signal.removeEventListener("abort", stop);
      if (!done.signal.aborted) done.abort("answered");
    }
    try {
      await reply.finish(end);
    } catch (err) {
      this.deps.log.warn({ err: (err as Error).message, request: request.id }, "cannot answer the API");
    } finally {
      reply.close();
      await watch;
    }
  }

  private readLogs(request: LogRequest, reply: ReplyWriter, signal: AbortSignal): Promise<string> {
    const { backend, jobs } = this.deps;
    if (!backend.readLogs) throw new LogError("failed", `the ${backend.kind} backend keeps no logs`);
    const { id: _id, kind: _kind, sentAt: _sentAt, ...query } = request;
    const sink: LogSink = { write: (text) => reply.write(text, signal) };
    return backend.readLogs({ ...query, renderJob: () => jobs.get(request.job.id) }, sink, signal);
  }

  /** Ends a followed stream once its asker's live key is gone. */
  private async watchAsker(request: LogRequest, done: AbortController): Promise<void> {
    const live = this.deps.keys.live(request.id);
    while (!done.signal.aborted) {
      await sleep(LIVE_RENEW_MS, done.signal).catch(() => {});
      if (done.signal.aborted) return;
      const present = await this.deps.connection.exists(live).catch(() => 1);
      if (!present) done.abort("the reader left");
    }
  }
}

function parseRequest(text: string): LogRequest | null {
  try {
    const parsed = logRequest.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** An answer stream: text gathered into pieces, within the byte limit. */
class ReplyWriter {
  private buffer = "";
  private bytes = 0;
  private flushing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  limitReached = false;

  constructor(
    private readonly redis: Redis,
    private readonly key: string,
  ) {}

  async write(text: string, signal: AbortSignal): Promise<void> {
    if (this.limitReached || signal.aborted) return;
    let piece = text;
    const room = LOG_LIMIT_BYTES - this.bytes;
    if (Buffer.byteLength(piece) > room) {
      piece = wholeLines(piece, room);
      this.limitReached = true;
    }
    this.bytes += Buffer.byteLength(piece);
    this.buffer += piece;
    if (this.buffer.length >= PIECE_BYTES) await this.flush();
    else this.timer ??= setTimeout(() => void this.flush().catch(() => {}), FLUSH_MS);
    if (this.limitReached) throw new LimitReached();
  }

  async finish(end: ReplyEntry): Promise<void> {
    await this.flush();
    await this.redis
      .multi()
      .xadd(this.key, "*", ...entryFields(end))
      .expire(this.key, REPLY_TTL_SECONDS)
      .exec();
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
  }

  /** An empty piece when nothing waits to be sent: the reader knows the agent is there. */
  async heartbeat(): Promise<void> {
    if (this.buffer) return;
    await this.redis.xadd(this.key, "*", ...entryFields({ kind: "data", text: "" }));
  }

  private async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flushing;
    if (!this.buffer) return;
    const text = this.buffer;
    this.buffer = "";
    this.flushing = this.redis
      .multi()
      .xadd(this.key, "*", ...entryFields({ kind: "data", text }))
      .expire(this.key, REPLY_TTL_SECONDS)
      .exec()
      .then(() => {});
    await this.flushing;
  }
}

/** The stream's byte limit was reached: the backend stops reading. */
export class LimitReached extends Error {
  override name = "LimitReached";
}

/** The whole lines of `text` that fit in `room` bytes. */
function wholeLines(text: string, room: number): string {
  const cut = Buffer.from(text).subarray(0, Math.max(0, room)).toString();
  const end = cut.lastIndexOf("\n");
  return end < 0 ? "" : cut.slice(0, end + 1);
}
