// Per-token limits, so that one token cannot take the API away from the others: a bucket of
// cost points per token (an operation takes its cost, query-cost.ts, before it runs; the bucket
// refills at a fixed rate) and a cap on the token's operations in flight. A refused operation is
// answered at once with RATE_LIMITED, runs nothing and takes nothing from the bucket. Until the
// retryAfter of a cost refusal has passed, the token's next requests are refused before they are
// read, over HTTP answered only when that time comes (at most HELD_ANSWER_DELAY_MS later): a client
// that does not wait costs the API a header lookup per request, a few requests a second.
//
// The buckets live in this process: with several API replicas behind a load balancer a token
// gets each replica's budget. ADMIN and AGENT tokens have budgets of their own, larger: an
// operator's tools, and the cluster reports that must never wait behind a limit in normal
// operation.
import { GraphQLError } from "graphql";
import type { Principal } from "../store/index.js";
import { MAX_QUERY_COST } from "./query-cost.js";

export interface TokenBudget {
  /** Cost points a token's bucket holds (a new token starts full); at least MAX_QUERY_COST. */
  burst: number;
  /** Points the bucket gets back per second; 0 = no cost limit. */
  perSecond: number;
  /** Operations of one token in flight at once (an open subscription is one for as long as it
   * is open); 0 = no cap. */
  concurrent: number;
  /** WebSocket connections of one token open at once (default DEFAULT_WS_CONNECTIONS); 0 = no cap. */
  connections?: number;
}

/** A token's WebSocket connections open at once, by default: a dashboard or CLI needs one or two. */
export const DEFAULT_WS_CONNECTIONS = 20;

export interface RateLimits {
  /** MEMBER and VIEWER tokens. */
  user: TokenBudget;
  /** ADMIN tokens. */
  admin: TokenBudget;
  /** AGENT tokens (a cluster's reports, its agent's template reads). */
  agent: TokenBudget;
}

/**
 * The defaults (FLEETQ_API_RATE and the other variables of src/cli/api-options.ts change them).
 * A MEMBER or VIEWER token may run two of the heaviest allowed queries (20,000 each) with a full
 * bucket and about one such query every 10 s after that: a query of that cost keeps the event loop
 * busy at a stretch, and submissions of other tokens wait behind it (docs/benchmarks.md,
 * `bench:api-query-weight`). The dashboard's four queries
 * cost about 9,000 with 10 clusters (the bucket holds the first load and the one the live
 * updates start with). An agent's requests cost 1 (reports) to about 10 (templates), with up to
 * 32 binds worked on at once: its budget leaves it far from any limit.
 */
export const DEFAULT_RATE_LIMITS: RateLimits = {
  user: { burst: 40_000, perSecond: 2_000, concurrent: 64, connections: DEFAULT_WS_CONNECTIONS },
  admin: { burst: 200_000, perSecond: 50_000, concurrent: 128, connections: DEFAULT_WS_CONNECTIONS },
  agent: { burst: 200_000, perSecond: 100_000, concurrent: 128, connections: DEFAULT_WS_CONNECTIONS },
};

export const RATE_LIMITED = "RATE_LIMITED";

/** Operations costing at least this much are a token's heavy ones, run one at a time (heavyTurn):
 * each holds the event loop long enough that several at once would hold up other tokens. */
export const HEAVY_OPERATION_COST = 5_000;

/** A request over HTTP sent before the retryAfter of its token's last cost refusal is answered
 * (refused) when that time comes, at most this much later. */
export const HELD_ANSWER_DELAY_MS = 1_000;

/** Why an operation was refused: what the error's extensions carry. */
export interface Refusal {
  /** The operation's cost (absent when refused for concurrency, before the cost is known). */
  cost?: number;
  /** Points left in the token's bucket. */
  remaining: number;
  /** Seconds until the operation would be accepted. */
  retryAfter: number;
  /** The token's bucket size and refill per second. */
  limit: number;
  perSecond: number;
  /** Refused because the token already had this many operations in flight. */
  concurrent?: number;
  /** Refused unread: sent before the retryAfter of the token's last cost refusal. */
  held?: true;
}

interface Bucket {
  /** Settles when the token's last heavy operation has finished. */
  heavy: Promise<void>;
  points: number;
  /** When `points` was last brought up to date (ms). */
  at: number;
  inFlight: number;
  /** WebSocket connections open. */
  connections: number;
  /** Until then (ms) the token's requests are refused unread (after a cost refusal). */
  heldUntil: number;
}

/** Above this many buckets, full and idle ones are forgotten (a full bucket is a new one). */
const MAX_IDLE_BUCKETS = 10_000;
const idle = (b: Bucket) => b.inFlight === 0 && b.connections === 0;

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    readonly limits: RateLimits = DEFAULT_RATE_LIMITS,
    private readonly now: () => number = Date.now,
  ) {
    for (const [who, b] of Object.entries(limits)) {
      if (b.perSecond > 0 && b.burst < MAX_QUERY_COST)
        throw new Error(
          `the ${who} token bucket (${b.burst}) must hold at least the cost limit of one query, ${MAX_QUERY_COST}`,
        );
    }
  }

  private budget(p: Principal): TokenBudget {
    return p.role === "AGENT" ? this.limits.agent : p.role === "ADMIN" ? this.limits.admin : this.limits.user;
  }

  private bucket(p: Principal): Bucket {
    const budget = this.budget(p);
    const now = this.now();
    let b = this.buckets.get(p.tokenId);
    if (!b) {
      if (this.buckets.size >= MAX_IDLE_BUCKETS) this.forgetIdle();
      b = {
        heavy: Promise.resolve(),
        points: budget.burst,
        at: now,
        inFlight: 0,
        connections: 0,
        heldUntil: 0,
      };
      this.buckets.set(p.tokenId, b);
    } else if (now > b.at) {
      b.points = Math.min(budget.burst, b.points + ((now - b.at) / 1000) * budget.perSecond);
      b.at = now;
    }
    return b;
  }

  private forgetIdle(): void {
    const now = this.now();
    for (const [id, b] of this.buckets) {
      // The rate is not known here; an hour is enough for any bucket of sensible size to refill.
      if (idle(b) && now - b.at > 3_600_000) this.buckets.delete(id);
    }
    if (this.buckets.size >= MAX_IDLE_BUCKETS) {
      for (const [id, b] of this.buckets) if (idle(b)) this.buckets.delete(id);
    }
  }

  private refusal(p: Principal, b: Bucket, extra: Partial<Refusal>, retryAfter: number): Refusal {
    const budget = this.budget(p);
    return {
      ...extra,
      remaining: Math.floor(b.points),
      retryAfter,
      limit: budget.burst,
      perSecond: budget.perSecond,
    };
  }

  /** Takes `cost` points (every operation costs at least 1); null when taken, else the refusal. */
  take(p: Principal, cost: number): Refusal | null {
    const budget = this.budget(p);
    if (budget.perSecond <= 0) return null;
    const b = this.bucket(p);
    const charge = Math.max(1, cost);
    if (charge <= b.points) {
      b.points -= charge;
      return null;
    }
    const retryAfter = Math.max(1, Math.ceil((charge - b.points) / budget.perSecond));
    b.heldUntil = b.at + retryAfter * 1000;
    return this.refusal(p, b, { cost: charge }, retryAfter);
  }

  /** The refusal of a request sent before the retryAfter of the token's last cost refusal. */
  held(p: Principal): Refusal | null {
    if (this.budget(p).perSecond <= 0) return null;
    const b = this.bucket(p);
    const left = b.heldUntil - b.at;
    return left > 0 ? this.refusal(p, b, { held: true }, Math.ceil(left / 1000)) : null;
  }

  /** Counts an operation in flight: a release function, or the refusal when the token is at its cap. */
  enter(p: Principal): (() => void) | Refusal {
    const budget = this.budget(p);
    if (budget.concurrent <= 0) return () => {};
    const b = this.bucket(p);
    if (b.inFlight >= budget.concurrent) return this.refusal(p, b, { concurrent: budget.concurrent }, 1);
    b.inFlight++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      b.inFlight--;
    };
  }

  /** Counts a WebSocket connection of the token: a release function, or null when the token
   * already has its most open. */
  connect(p: Principal): (() => void) | null {
    const cap = this.budget(p).connections ?? DEFAULT_WS_CONNECTIONS;
    const b = this.bucket(p);
    if (cap > 0 && b.connections >= cap) return null;
    b.connections++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      b.connections--;
    };
  }

  /**
   * Waits until the token's heavy operations (costing HEAVY_OPERATION_COST or more) sent before
   * this one have finished, whatever its budget: one token's heavy operations run one at a time,
   * so that their stretches on the event loop do not add up to one long stretch. Returns the
   * function to call when this one has finished.
   */
  async heavyTurn(p: Principal): Promise<() => void> {
    const b = this.bucket(p);
    const before = b.heavy;
    let finished!: () => void;
    const mine = new Promise<void>((resolve) => {
      finished = resolve;
    });
    b.heavy = before.then(() => mine);
    await before;
    return finished;
  }

  /** Points left in the token's bucket (tests, diagnostics). */
  remaining(p: Principal): number {
    return Math.floor(this.bucket(p).points);
  }
}

export function refusalMessage(r: Refusal): string {
  if (r.held)
    return `Rate limited: this token's last operation was refused for its cost, and no operation of it is read until then; retry in ${r.retryAfter} s`;
  if (r.concurrent !== undefined)
    return `Rate limited: this token already has ${r.concurrent} operations in flight (the most it may have); retry when one has finished`;
  return `Rate limited: this operation costs ${r.cost} points and the token has ${r.remaining} left (a bucket of ${r.limit} refilled at ${r.perSecond} per second); retry in ${r.retryAfter} s`;
}

/** The GraphQL error of a refusal; over HTTP (`http`) with status 429 and a Retry-After header. */
export function rateLimited(r: Refusal, http: boolean): GraphQLError {
  return new GraphQLError(refusalMessage(r), {
    extensions: {
      code: RATE_LIMITED,
      ...r,
      ...(http ? { http: { status: 429, headers: new Map([["retry-after", String(r.retryAfter)]]) } } : {}),
    },
  });
}
