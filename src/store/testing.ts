// For tests and benchmarks only: the Prisma client behind a Store or a Database, for setting up
// or reading back what the index's operations and queries do not. Product code (src/, workers/,
// bin/, scripts/) may not import this module (test/layers.test.ts).
import { holdClient } from "./client.js";
import { discardEvents, type EventSink } from "./events.js";
import type { PrismaClient } from "./generated/prisma/client.js";
import type { Store } from "./store.js";

export { prismaOf } from "./client.js";

/** A Store over a Prisma client the test made itself (one that logs its queries, say). */
export function storeOver(prisma: PrismaClient, events: EventSink = discardEvents): Store {
  return holdClient({ events }, prisma);
}
