// The store: the database plus where its events are published. Every state change is one
// named operation (src/store/operations) run through `transact`: one transaction that also
// writes the operation's events, which are published once it has committed.
import { holdClient, prismaOf } from "./client.js";
import type { Database, Tx } from "./db.js";
import {
  discardEvents,
  type EventRow,
  type EventSink,
  type NewEvent,
  type RecordEvent,
  type StoreEvent,
  toStoreEvent,
} from "./events.js";

/** The database and where its committed events go. Its Prisma client is the store's own
 * (client.ts): callers use the operations and queries the index exports. */
export interface Store {
  readonly events: EventSink;
}

/** The store over an open database. */
export function createStore(db: Database, events: EventSink = discardEvents): Store {
  return holdClient({ events }, prismaOf(db));
}

/** The same database, its committed events published to `events` instead. */
export function withEvents(store: Store, events: EventSink): Store {
  return holdClient({ events }, prismaOf(store));
}

/** Who asks for a change: recorded with its events (a token's name, "scheduler", "agent:<cluster>"). */
export interface Actor {
  name: string;
}

export interface TransactOptions {
  isolationLevel?: "ReadCommitted" | "RepeatableRead" | "Serializable";
  /** ms; Prisma's default of 5 s is short for a large session commit. */
  timeout?: number;
}

export async function transact<T>(
  store: Store,
  actor: Actor,
  fn: (tx: Tx, record: RecordEvent) => Promise<T>,
  opts: TransactOptions = {},
): Promise<T> {
  const recorded: NewEvent[] = [];
  let events: StoreEvent[] = [];
  const result = await prismaOf(store).$transaction(
    async (tx) => {
      const value = await fn(tx, (e) => recorded.push(e));
      if (recorded.length) {
        events = (await insertEvents(tx, recorded, actor)).map(toStoreEvent);
      }
      return value;
    },
    { isolationLevel: opts.isolationLevel, timeout: opts.timeout ?? 30_000, maxWait: 10_000 },
  );
  if (events.length) await store.events.publish(events).catch(() => {});
  return result;
}

/** For operations that are one SQL statement (no `transact`): publish the event rows they wrote. */
export async function publishCommitted(store: Store, rows: EventRow[]): Promise<void> {
  await store.events.publish(rows.map(toStoreEvent)).catch(() => {});
}

/** One INSERT … SELECT over a JSON array: a session commit records hundreds of events, and
 * Prisma's createManyAndReturn spends many times the CPU on each row. */
async function insertEvents(tx: Tx, events: readonly NewEvent[], actor: Actor) {
  const rows = events.map((e) => ({
    kind: e.kind,
    message: e.message,
    job_id: e.job ?? null,
    queue_name: e.queue ?? null,
    cluster_name: e.cluster ?? null,
    data: e.data ?? null,
  }));
  const inserted = await tx.$queryRaw<Parameters<typeof toStoreEvent>[0][]>`
    INSERT INTO event (kind, message, job_id, queue_name, cluster_name, actor, data)
    SELECT v.kind, v.message, v.job_id, v.queue_name, v.cluster_name, ${actor.name}, v.data
    FROM ROWS FROM (jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
      AS (kind text, message text, job_id uuid, queue_name text, cluster_name text, data jsonb))
      WITH ORDINALITY AS v(kind, message, job_id, queue_name, cluster_name, data, n)
    ORDER BY v.n
    RETURNING id, at, kind, message, job_id::text AS "jobId", queue_name AS "queueName",
      cluster_name AS "clusterName", actor, data`;
  return inserted.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
