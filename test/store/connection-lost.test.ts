// PostgreSQL connections cut under a process (a restart, pg_terminate_backend): the operation
// using one fails and is retried by its caller; nothing crashes the process. A connection the
// snapshot reader held between two queries that died raised an 'error' event nobody listened
// to, which ended worker processes (the pool's idle connections are heard by the adapter).
import { prismaOf } from "../../src/store/testing.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openDatabase } from "../../src/store/db.js";
import { readConsistent } from "../../src/store/snapshot/read-rows.js";
import { openTestStore, type TestStore } from "../helpers/store.js";

let t: TestStore;

beforeAll(async () => {
  t = await openTestStore();
});
afterAll(async () => t?.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Terminates every other connection to the test database. */
async function terminateOthers(except?: number): Promise<void> {
  await prismaOf(t.db).$queryRawUnsafe(
    `SELECT pg_terminate_backend(pid)::text FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND pid <> $1`,
    except ?? -1,
  );
}

it("a snapshot read whose connection is cut between two queries fails; the process goes on", async () => {
  const read = readConsistent(prismaOf(t.db), async (q) => {
    const [row] = await q("SELECT pg_backend_pid()", []);
    const pid = row![0] as number;
    await prismaOf(t.db).$queryRawUnsafe("SELECT pg_terminate_backend($1)::text", pid);
    await sleep(300); // the connection's end arrives while no query runs on it
    return q("SELECT 1", []);
  });
  await expect(read).rejects.toThrow();
  expect(await readConsistent(prismaOf(t.db), (q) => q("SELECT 1 AS one", []))).toEqual([[1]]);
});

it("connections idle in the pool cut at once do not end the process; the next query opens new ones", async () => {
  // Fill the pool with idle connections, then cut them all.
  await Promise.all(
    Array.from({ length: 4 }, () => readConsistent(prismaOf(t.db), (q) => q("SELECT pg_sleep(0.05)", []))),
  );
  const [row] = await prismaOf(t.db).$queryRawUnsafe<{ pid: number }[]>("SELECT pg_backend_pid() AS pid");
  const pid = row!.pid;
  await terminateOthers(pid);
  await sleep(300);
  const again = async () => readConsistent(prismaOf(t.db), (q) => q("SELECT 2", []));
  const result = await again().catch(() => again());
  expect(result).toEqual([[2]]);
});

it("a pooled connection cut before the client's first query does not end the process", async () => {
  // The snapshot reader takes connections from the pool directly; Prisma's adapter, which would
  // hear an idle connection's end, may not be connected yet.
  const db = await openDatabase(t.testDb.url);
  try {
    const [row] = await readConsistent(prismaOf(db), (q) => q("SELECT pg_backend_pid()", []));
    const pid = row![0] as number;
    await prismaOf(t.db).$queryRawUnsafe("SELECT pg_terminate_backend($1)::text", pid);
    await sleep(300);
    expect(await readConsistent(prismaOf(db), (q) => q("SELECT 3", []))).toEqual([[3]]);
  } finally {
    await db.close();
  }
});
