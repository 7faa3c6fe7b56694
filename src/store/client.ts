// The Prisma client behind a Store or a Database, for the store's own modules only: the index
// does not re-export this module, so no type the store exports names Prisma's
// (test/layers.test.ts). Tests reach it through src/store/testing.ts.
import type { Database } from "./db.js";
import type { PrismaClient } from "./generated/prisma/client.js";
import type { Store } from "./store.js";

const clients = new WeakMap<object, PrismaClient>();

/** Makes `prisma` the client behind `handle` (a Database as it opens, a Store as it is made). */
export function holdClient<T extends object>(handle: T, prisma: PrismaClient): T {
  clients.set(handle, prisma);
  return handle;
}

/** The client behind a Store or a Database that src/store made. */
export function prismaOf(handle: Store | Database): PrismaClient {
  const prisma = clients.get(handle);
  if (!prisma)
    throw new Error("not a Store or Database of src/store (openDatabase, createStore, withEvents)");
  return prisma;
}
