// The fleet's size, for the cost of the lists whose length is the fleet's (every cluster, a
// cluster's nodes): read in the background at most every FLEET_SIZE_TTL_MS, so that the cost check
// stays synchronous and costs no database query per request. A fleet that grew since the last
// read is under-counted for that long.
import { fleetSize, type Store } from "../store/index.js";
import { DEFAULT_FLEET_SIZE, type FleetSize } from "./query-cost.js";

export const FLEET_SIZE_TTL_MS = 5_000;

export class FleetSizeCache {
  private size: FleetSize = DEFAULT_FLEET_SIZE;
  private at = Number.NEGATIVE_INFINITY;
  private reading: Promise<void> | null = null;

  constructor(
    private readonly store: Store,
    private readonly ttlMs = FLEET_SIZE_TTL_MS,
  ) {}

  /** The size as last read; starts a read when that is older than the TTL. */
  current(): FleetSize {
    if (Date.now() - this.at >= this.ttlMs) void this.refresh();
    return this.size;
  }

  /** Reads the size now (one read at a time); on a failure the last size stays. */
  refresh(): Promise<void> {
    this.reading ??= fleetSize(this.store)
      .then(
        (size) => {
          this.size = size;
        },
        () => {},
      )
      .finally(() => {
        this.at = Date.now();
        this.reading = null;
      });
    return this.reading;
  }
}
