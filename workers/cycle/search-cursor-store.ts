// Where a cluster's stopped victim searches wait for its next cycle (SessionResult.searchCursors
// → Snapshot.searchCursors). In Redis, so the next cycle goes on with them whichever worker
// process runs it. Only hints: one that cannot be read or written costs a search restarted from
// the beginning, never a cycle.
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { type SearchCursor, searchCursorError } from "../../src/core/index.js";

/** Kept this long after the last cycle that left them (a cluster gone quiet forgets them). */
const TTL_SECONDS = 3600;

export class SearchCursorStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly log: Logger,
  ) {}

  private key(cluster: string): string {
    return `${this.prefix}search-cursors:${cluster}`;
  }

  async load(cluster: string): Promise<SearchCursor[]> {
    try {
      const text = await this.redis.get(this.key(cluster));
      const cursors: unknown = text ? JSON.parse(text) : [];
      // One the core would refuse (written by another version) is dropped, not allowed to fail the cycle.
      return Array.isArray(cursors) ? cursors.filter((c) => searchCursorError(c) === null) : [];
    } catch (err) {
      this.log.warn(
        { cluster, err: (err as Error).message },
        "could not read the search cursors; searches start over",
      );
      return [];
    }
  }

  async save(cluster: string, cursors: readonly SearchCursor[]): Promise<void> {
    try {
      if (cursors.length === 0) await this.redis.del(this.key(cluster));
      else await this.redis.set(this.key(cluster), JSON.stringify(cursors), "EX", TTL_SECONDS);
    } catch (err) {
      this.log.warn({ cluster, err: (err as Error).message }, "could not keep the search cursors");
    }
  }
}
