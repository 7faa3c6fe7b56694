// The store: the database plus where its events are published. Every state change is one
// named operation (src/store/operations) run through `transact`: one transaction that also
// writes the operation's events, which are published once it has committed.
import type { PrismaClient, Tx } from "./db.js";
import {
  discardEvents,
  type EventRow,
  type EventSink,
  type NewEvent,
  type RecordEvent,
  type StoreEvent,
  toStoreEvent,
} from "./events.js";

export interface Store {
  prisma: PrismaClient;
  events: EventSink;
}

export function createStore(prisma: PrismaClient, events: EventSink = discardEvents): Store {
  return { prisma, events };
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
  const result = await store.prisma.$transaction(
    async (tx) => {
      const value = await fn(tx, (e) => recorded.push(e));
      if (recorded.length) {
        const rows = await tx.event.createManyAndReturn({
          data: recorded.map((e) => ({
            kind: e.kind,
            message: e.message,
            jobId: e.job ?? null,
            queueName: e.queue ?? null,
            clusterName: e.cluster ?? null,
            actor: actor.name,
          })),
        });
        events = rows.map(toStoreEvent);
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
