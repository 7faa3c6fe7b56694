// change_xid, what the workers' delta reads rely on: every row a transaction inserts or updates
// carries that transaction's id (inserts through the column default, updates through the
// trigger, an upsert either way), whichever statement wrote it, and a row untouched keeps its.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createQueue, submitJobs } from "../../src/store/index.js";
import { admin as onConnection, sql } from "../helpers/db.js";
import { openTestStore, type TestStore } from "../helpers/store.js";
import { addC1, admin, job } from "./fixtures.js";

let t: TestStore;

beforeAll(async () => {
  t = await openTestStore();
  await createQueue(t.store, admin, { name: "team-a" });
  await addC1(t.store);
});
afterAll(() => t.close());

const TABLES = ["cluster", "node", "queue", "queue_quota", "job", "job_task", "pod"] as const;

/** Runs `sql` in one transaction; returns that transaction's id. */
async function inTransaction(statements: string[]): Promise<string> {
  return onConnection(async (c) => {
    await c.query("BEGIN");
    for (const s of statements) await c.query(s);
    const { rows } = await c.query<{ xid: string }>("SELECT pg_current_xact_id()::text AS xid");
    await c.query("COMMIT");
    return rows[0]!.xid;
  }, t.testDb.url);
}

const stamps = async (table: string, where: string) =>
  (await sql<{ x: string }>(t.testDb.url, `SELECT change_xid::text AS x FROM ${table} WHERE ${where}`)).map(
    (r) => r.x,
  );

describe("change_xid", () => {
  it("an insert carries the inserting transaction's id, on every tracked table", async () => {
    const xid = await inTransaction([
      "INSERT INTO cluster (name) VALUES ('s1')",
      `INSERT INTO node (cluster_name, name, cpu_millis, memory, gpus, gpu_memory)
         VALUES ('s1', 'n1', 1000, 1, 0, 0)`,
      "INSERT INTO queue (name) VALUES ('s-q')",
      "INSERT INTO queue_quota (queue_name, scope, resource, deserved) VALUES ('s-q', '*', 'GPU', 1)",
    ]);
    expect(await stamps("cluster", "name = 's1'")).toEqual([xid]);
    expect(await stamps("node", "cluster_name = 's1'")).toEqual([xid]);
    expect(await stamps("queue", "name = 's-q'")).toEqual([xid]);
    expect(await stamps("queue_quota", "queue_name = 's-q'")).toEqual([xid]);
  });

  it("a submitted batch's jobs, tasks and pods carry its transaction's id; an update re-stamps", async () => {
    const before = BigInt(
      (await sql<{ x: string }>(t.testDb.url, "SELECT pg_current_xact_id()::text AS x"))[0]!.x,
    );
    const [a, b] = await submitJobs(t.store, admin, [job({ name: "a" }), job({ name: "b" })]);
    const ids = `('${a!.job.id}', '${b!.job.id}')`;
    const jobStamps = await stamps("job", `id IN ${ids}`);
    const all = [
      ...jobStamps,
      ...(await stamps("job_task", `job_id IN ${ids}`)),
      ...(await stamps("pod", `job_id IN ${ids}`)),
    ];
    expect(all).toHaveLength(2 + 2 + 4);
    expect(new Set(all).size).toBe(1); // one transaction
    expect(BigInt(all[0]!)).toBeGreaterThan(before);

    const xid = await inTransaction([
      `UPDATE job SET priority = 7 WHERE id = '${a!.job.id}'`,
      `UPDATE job_task SET duration_seconds = 5 WHERE job_id = '${a!.job.id}'`,
      `UPDATE pod SET message = 'x' WHERE job_id = '${a!.job.id}'`,
      "UPDATE queue SET priority = 5 WHERE name = 'team-a'",
      "UPDATE cluster SET cordoned = true WHERE name = 'c1'",
      "UPDATE node SET unschedulable = true WHERE cluster_name = 'c1'",
    ]);
    expect(await stamps("job", `id = '${a!.job.id}'`)).toEqual([xid]);
    expect(await stamps("job_task", `job_id = '${a!.job.id}'`)).toEqual([xid]);
    expect(await stamps("pod", `job_id = '${a!.job.id}'`)).toEqual([xid, xid]);
    expect(await stamps("queue", "name = 'team-a'")).toEqual([xid]);
    expect(await stamps("cluster", "name = 'c1'")).toEqual([xid]);
    expect(await stamps("node", "cluster_name = 'c1'")).toEqual([xid]);
    expect(await stamps("job", `id = '${b!.job.id}'`)).toEqual([jobStamps[0]]); // untouched
  });

  it("an upsert that updates re-stamps, as does one that inserts", async () => {
    await inTransaction(["INSERT INTO queue (name) VALUES ('u-q')"]);
    const xid = await inTransaction([
      "INSERT INTO queue (name, priority) VALUES ('u-q', 3), ('u-new', 3) ON CONFLICT (name) DO UPDATE SET priority = 3",
    ]);
    expect(await stamps("queue", "name IN ('u-q', 'u-new')")).toEqual([xid, xid]);
  });

  it("covers every tracked table", async () => {
    const tracked = await sql<{ t: string }>(
      t.testDb.url,
      "SELECT table_name AS t FROM information_schema.columns WHERE column_name = 'change_xid' AND table_name <> 'change_tombstone' ORDER BY 1",
    );
    expect(tracked.map((r) => r.t)).toEqual([...TABLES].sort());
  });
});
