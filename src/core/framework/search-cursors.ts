// Victim searches carried from one session to the next (KAI keeps scenario checkpoints
// between cycles for its time-bounded searches). A disruptive action whose scenario
// budget stops a job's search leaves a cursor; the next session's attempt at that job
// takes it and goes on from there. Cursors the session did not take (the action never
// got to the job) are handed on unchanged while the job still waits, until they have been
// idle for searchCursorIdleSeconds: then the search starts over when the job is attempted.
import type { ActionName, SearchCursor } from "../api/result.js";
import { ACTION_NAMES } from "./config.js";
import type { Session } from "./session.js";

const key = (action: ActionName, job: string) => `${action}/${job}`;

export class SearchCursors {
  private readonly given = new Map<string, SearchCursor>();
  private readonly taken = new Set<string>();
  private readonly left = new Map<string, SearchCursor>();

  /**
   * `now`: the session's time; `idleSeconds`: how long a cursor may wait (-1: no limit).
   * @throws on a malformed cursor, naming it (bad input changes nothing).
   */
  constructor(cursors: readonly SearchCursor[] = [], now = 0, idleSeconds = -1) {
    cursors.forEach((c, i) => {
      const bad = searchCursorError(c);
      if (bad) throw new Error(`snapshot.searchCursors[${i}]: ${bad}`);
      if (idleSeconds >= 0 && now - c.leftAt > idleSeconds * 1000) return;
      this.given.set(key(c.action, c.job), c);
    });
  }

  /** Whether the session was given a cursor for `action` at `job` (not taking it). */
  has(action: ActionName, job: string): boolean {
    return this.given.has(key(action, job));
  }

  /** The cursor an attempt of `action` at `job` goes on from (taken: it is not handed on). */
  take(action: ActionName, job: string): SearchCursor | null {
    const k = key(action, job);
    // One attempt goes on from it; another in the same session (none today) starts over.
    if (this.taken.has(k)) return null;
    this.taken.add(k);
    return this.given.get(k) ?? null;
  }

  /** Where this session's search stopped. */
  leave(cursor: SearchCursor): void {
    this.left.set(key(cursor.action, cursor.job), cursor);
  }

  /** For the result: the cursors left, and those given but not taken whose job still waits. */
  result(ssn: Session): SearchCursor[] {
    const out = new Map(this.left);
    for (const [k, c] of this.given) {
      if (this.taken.has(k) || out.has(k)) continue;
      const job = ssn.jobs.get(c.job);
      if (job && job.countOf("Pending") > 0) out.set(k, c);
    }
    return [...out.values()].sort((a, b) =>
      a.action !== b.action ? (a.action < b.action ? -1 : 1) : a.job < b.job ? -1 : a.job > b.job ? 1 : 0,
    );
  }
}

/** What is wrong with a cursor (null: nothing). */
export function searchCursorError(c: SearchCursor): string | null {
  if (!c || typeof c !== "object") return "not an object";
  if (!ACTION_NAMES.includes(c.action)) return `unknown action ${JSON.stringify(c.action)}`;
  if (typeof c.job !== "string" || c.job === "") return "job must be a non-empty string";
  if (!Number.isInteger(c.tasks) || c.tasks < 1) return `tasks must be an integer ≥ 1, got ${c.tasks}`;
  if (!Number.isInteger(c.prefix) || c.prefix < 1 || c.prefix > c.tasks)
    return `prefix must be an integer from 1 to tasks (${c.tasks}), got ${c.prefix}`;
  if (
    !Array.isArray(c.recordedVictims) ||
    c.recordedVictims.some((v) => !v || typeof v.job !== "string" || typeof v.pod !== "string")
  )
    return "recordedVictims must be a list of {job, pod} uids";
  if (!Number.isInteger(c.afterScenarios) || c.afterScenarios < 0)
    return `afterScenarios must be an integer ≥ 0, got ${c.afterScenarios}`;
  if (c.lastVictim !== null && typeof c.lastVictim !== "string")
    return "lastVictim must be a job uid or null";
  if (typeof c.leftAt !== "number" || !Number.isFinite(c.leftAt))
    return `leftAt must be a time in ms, got ${JSON.stringify(c.leftAt)}`;
  return null;
}
