// A cancel racing admission and a scheduling cycle must never leave the cancelled job's pods
// placed: the cancel and the admission serialise on the job's row, and the commit refuses
// placements for pods of a job that is finished by the time it writes.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSession } from "../../src/core/index.js";
import { StaleSnapshotError } from "../../src/store/errors.js";
import { assignJobClusters } from "../../src/store/operations/admission-decisions.js";
import { commitSession } from "../../src/store/operations/commit-session.js";
import { cancelJob } from "../../src/store/operations/jobs.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { loadSnapshot } from "../../src/store/snapshot/load-snapshot.js";
import { runCycle } from "../helpers/cycle.js";
import { countRows, sql } from "../helpers/db.js";
import type { TestStore } from "../helpers/store.js";
import { admin, job, jobOf, podsOf, storeWithC1 } from "./fixtures.js";

let t: TestStore;

beforeAll(async () => {
  t = await storeWithC1();
});
afterAll(async () => t?.close());

/** Resolves once `n` sessions of the test database wait for a lock. */
async function lockWaiters(n: number): Promise<void> {
  for (;;) {
    const [row] = await sql<{ n: number }>(
      t.testDb.url,
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    if (row!.n >= n) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function placedPods(jobId: string) {
  const pods = await countRows(
    t.testDb.url,
    "pod",
    "job_id = $1 AND state IN ('BINDING', 'RUNNING', 'PIPELINED')",
    [jobId],
  );
  const binds = await countRows(t.testDb.url, "bind_request", "job_id = $1 AND kind = 'BIND'", [jobId]);
  return { pods, binds };
}

describe("cancel racing admission and a cycle", () => {
  it("leaves no pod of the cancelled job placed, whatever the interleaving", async () => {
    const { job: j } = await submitJob(t.store, admin, job({ name: "raced" }));
    // Hold the job's pod rows so the cancel stops right before it changes them, after it has
    // read the job (still without a cluster).
    const holder = new pg.Client({ connectionString: t.testDb.url });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT id FROM pod WHERE job_id = $1 FOR UPDATE", [j.id]);
      const cancelled = cancelJob(t.store, admin, { id: j.id });
      await lockWaiters(1);
      // Admission gives the job its cluster meanwhile (or waits behind the cancel) …
      const admitted = assignJobClusters(t.store, { name: "admission" }, [{ job: j.id, cluster: "c1" }]);
      await Promise.race([admitted, lockWaiters(2)]);
      // … and a cycle plans on a snapshot read now.
      const snap = await loadSnapshot(t.store, "c1");
      const result = runSession(snap.snapshot);
      await holder.query("COMMIT");
      await cancelled;
      await admitted;
      await commitSession(t.store, "c1", snap.generation, result, snap.rows).catch((err) => {
        if (!(err instanceof StaleSnapshotError)) throw err;
      });
      await runCycle(t.store, "c1");
    } finally {
      await holder.end();
    }
    expect((await jobOf(t, j.id)).state).toBe("CANCELLED");
    expect(await placedPods(j.id)).toEqual({ pods: 0, binds: 0 });
  });

  it("the commit places no pod of a job cancelled after its snapshot was read", async () => {
    const { job: j } = await submitJob(t.store, admin, job({ name: "late-cancel", cluster: "c1" }));
    const snap = await loadSnapshot(t.store, "c1");
    const result = runSession(snap.snapshot);
    expect(result.binds.some((b) => b.job === j.id)).toBe(true);
    // The job ends without the cluster's generation moving (as a cancel that read the job
    // before it had a cluster does).
    await sql(
      t.testDb.url,
      `WITH pods AS (UPDATE pod SET state = 'FAILED', message = 'job cancelled' WHERE job_id = $1)
       UPDATE job SET state = 'CANCELLED' WHERE id = $1`,
      [j.id],
    );
    const committed = await commitSession(t.store, "c1", snap.generation, result, snap.rows);
    expect(committed.bindRequests.filter((b) => b.jobId === j.id)).toEqual([]);
    expect(await placedPods(j.id)).toEqual({ pods: 0, binds: 0 });
    const pods = await podsOf(t, j.id);
    expect(pods.map((p) => p.state)).toEqual(["FAILED", "FAILED"]);
  });
});
