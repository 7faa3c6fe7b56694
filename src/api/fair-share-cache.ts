// fairShare loads every cluster's snapshot: the heaviest read of the API. Computed once however
// many fields of a request (aliases) or concurrent requests ask, and the answer kept briefly,
// so readers cannot take the database's connections away from submissions.
import type { SchedulerConfig } from "../core/index.js";
import { type FairShareRow, fairShare } from "../fair-share/fair-share.js";
import type { Store, UsageWindow } from "../store/index.js";

/** How long an answer is served again: fair shares move at the pace of scheduling cycles. */
export const FAIR_SHARE_TTL_MS = 2_000;

export class FairShareCache {
  private readonly entries = new Map<string, { at: number; rows: Promise<FairShareRow[]> }>();

  constructor(
    private readonly store: Store,
    private readonly config?: SchedulerConfig,
    private readonly usageWindow?: UsageWindow | null,
    private readonly ttlMs = FAIR_SHARE_TTL_MS,
  ) {}

  rows(cluster: string | null | undefined): Promise<FairShareRow[]> {
    const key = cluster ?? "";
    const hit = this.entries.get(key);
    // A computation in flight is shared whatever its age: one at a time per key.
    if (hit && Date.now() - hit.at < this.ttlMs) return hit.rows;
    const rows = fairShare(this.store, {
      cluster,
      config: this.config,
      usageWindow: this.usageWindow,
    });
    const entry = { at: Number.POSITIVE_INFINITY, rows };
    this.entries.set(key, entry);
    rows.then(
      () => {
        entry.at = Date.now();
      },
      () => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
      },
    );
    return rows;
  }
}
