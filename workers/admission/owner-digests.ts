// Admission's cluster digests from the clusters' owners, so that the process running a pass keeps
// no copy of any cluster's rows. The pass sends one request to every worker (a signal) naming the
// clusters and the token of each digest it holds; each owner brings its cached view of the
// clusters it owns up to date — from PostgreSQL, so the digest includes everything committed
// before the request, the pass's own earlier assignments too — and answers on the request's reply
// list with a token (worker, lease epoch, view version) and, when the asker's token is not current,
// the key of the digest it stored in Redis (v8 serialisation). A cluster no owner answers for in
// time (none yet, or its owner gone) keeps the base the pass has; with none, it is read here once
// (`fallback`) and only its digest is kept.
import { randomUUID } from "node:crypto";
import { deserialize, serialize } from "node:v8";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { SchedulerConfig } from "../../src/core/index.js";
import type { ClusterCache, UsageWindow } from "../../src/store/index.js";
import type { WorkerSignal } from "../signals.js";
import { type ClusterDigest, DIGEST_FORMAT, digestCluster } from "./cluster-digest.js";
import type { DigestAnswer, DigestRequest, DigestSource } from "./state.js";

/** A stored digest and the reply lists live this long: a pass reads them within it. */
const KEEP_MS = 60_000;

interface Answer {
  cluster: string;
  token: string;
  /** Where the digest is; null: the asker's is current. */
  key: string | null;
}

export class OwnerDigests implements DigestSource {
  constructor(
    private readonly redis: Redis,
    /** A connection of its own: it blocks while waiting for answers. */
    private readonly blocking: Redis,
    private readonly prefix: string,
    private readonly send: (s: WorkerSignal) => Promise<void>,
    private readonly fallback: DigestSource,
    private readonly timeoutMs: number,
    private readonly log: Logger,
  ) {}

  async digests(
    clusters: readonly string[],
    known: ReadonlyMap<string, string>,
    req: DigestRequest,
  ): Promise<Map<string, DigestAnswer>> {
    const out = new Map<string, DigestAnswer>();
    if (!clusters.length) return out;
    const reply = `${this.prefix}admission:replies:${randomUUID()}`;
    await this.send({
      kind: "digests",
      clusters: [...clusters],
      known: Object.fromEntries(known),
      reply,
      format: DIGEST_FORMAT,
    });
    const answers = await this.collect(reply, clusters.length);
    const stored = answers.filter((a) => a.key !== null);
    const blobs = stored.length ? await this.redis.mgetBuffer(...stored.map((a) => a.key!)) : [];
    for (const [i, a] of stored.entries()) {
      const blob = blobs[i];
      const digest = blob ? (deserialize(blob) as ClusterDigest) : null;
      // Another format (an owner of another version) counts as no answer.
      if (digest?.format === DIGEST_FORMAT) out.set(a.cluster, { token: a.token, digest });
    }
    for (const a of answers) if (a.key === null) out.set(a.cluster, { token: a.token, digest: null });
    const unread = clusters.filter((c) => !out.has(c) && !known.has(c));
    if (unread.length) {
      this.log.info({ clusters: unread }, "no owner answered for these clusters' digests: read here");
      for (const [c, a] of await this.fallback.digests(unread, new Map(), req)) out.set(c, a);
    }
    return out;
  }

  private async collect(reply: string, expected: number): Promise<Answer[]> {
    const answers = new Map<string, Answer>();
    const deadline = Date.now() + this.timeoutMs;
    while (answers.size < expected) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      const r = await this.blocking.blpop(reply, Math.max(0.01, left / 1000));
      if (!r) break;
      const a = JSON.parse(r[1]) as Answer;
      answers.set(a.cluster, a);
    }
    await this.redis.del(reply);
    return [...answers.values()];
  }
}

/** The owner's side: answers digest requests for the clusters this worker owns. */
export class DigestServer {
  /** Per cluster, the token of the last digest stored and where. */
  private readonly stored = new Map<string, { token: string; key: string }>();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly workerId: string,
    private readonly cache: ClusterCache,
    /** The cycles' usage window: another would make every refresh a change for them. */
    private readonly usage: UsageWindow | undefined,
    private readonly config: SchedulerConfig,
    private readonly lease: (cluster: string) => { epoch: number } | null,
  ) {}

  async answer(req: {
    clusters: string[];
    known: Record<string, string>;
    reply: string;
    format?: number;
  }): Promise<void> {
    // A pass of another version could not read this digest: to it, this owner does not answer.
    if (req.format !== DIGEST_FORMAT) return;
    const mine = req.clusters.filter((c) => this.lease(c));
    // One read tells which of the asker's digests surely still hold (no usage window: usage
    // changes with time); those are answered without waiting for the cluster's cycle.
    const known = mine.filter((c) => req.known[c] !== undefined);
    const quiet =
      known.length && !this.usage ? await this.cache.unchangedSinceRefresh(known) : new Set<string>();
    await Promise.all(
      mine.map(async (cluster) => {
        const lease = this.lease(cluster);
        if (!lease) return;
        const held = quiet.has(cluster) ? this.tokenOf(lease.epoch, this.cache.versionOf(cluster)) : null;
        if (held !== null && held === req.known[cluster])
          return this.reply(req.reply, { cluster, token: held, key: null });
        const view = await this.cache.refresh(cluster, { now: Date.now(), usage: this.usage });
        const token = this.tokenOf(lease.epoch, view.version)!;
        let key: string | null = null;
        if (req.known[cluster] !== token) {
          const last = this.stored.get(cluster);
          if (last?.token === token && (await this.redis.pexpire(last.key, KEEP_MS)) === 1) key = last.key;
          else {
            key = `${this.prefix}admission:digest:${cluster}:${token}`;
            await this.redis.set(key, serialize(digestCluster(view.snapshot, this.config)), "PX", KEEP_MS);
            this.stored.set(cluster, { token, key });
          }
        }
        await this.reply(req.reply, { cluster, token, key });
      }),
    );
  }

  private tokenOf(epoch: number, version: number | undefined): string | null {
    return version === undefined ? null : `${this.workerId}:${epoch}:${version}`;
  }

  private async reply(list: string, answer: Answer): Promise<void> {
    await this.redis.multi().rpush(list, JSON.stringify(answer)).pexpire(list, KEEP_MS).exec();
  }

  /** The cluster moved to another worker. */
  forget(cluster: string): void {
    this.stored.delete(cluster);
  }
}
