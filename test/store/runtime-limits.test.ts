// stopJobsPastRuntimeLimit on real PostgreSQL, at a given time: only unfinished jobs whose limit
// has passed since they started are stopped — pods on nodes RELEASING with an EVICT request each,
// the others FAILED, the job FAILED with its event — and the cluster's fence moves; jobs within
// their limit, without one, never started, or already finished are left alone.
import { afterAll, beforeAll, expect, it } from "vitest";
import { cancelJob } from "../../src/store/operations/jobs.js";
import { stopJobsPastRuntimeLimit } from "../../src/store/operations/runtime-limits.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { eventsOfJobs, jobsById, MAX_EVENTS_PAGE } from "../../src/store/index.js";
import { sql } from "../helpers/db.js";
import type { TestStore } from "../helpers/store.js";
import { admin, bindRequestsOf, generationOfC1, job, jobOf, podsOf, storeWithC1 } from "./fixtures.js";

let t: TestStore;
beforeAll(async () => {
  t = await storeWithC1();
});
afterAll(async () => t?.close());

const STARTED = new Date("2026-01-01T10:00:00Z");
const setJobState = (id: string, state: string) =>
  sql(t.testDb.url, 'UPDATE job SET state = $2::"JobState" WHERE id = $1', [id, state]);

const at = (seconds: number) => new Date(STARTED.getTime() + seconds * 1000);

/** A job on c1 that started at STARTED: pod 0 RUNNING on n1, pod 1 still PENDING. */
async function running(name: string, limit: number | null): Promise<string> {
  const { job: row } = await submitJob(
    t.store,
    admin,
    job({ name, cluster: "c1", ...(limit ? { maxRuntimeSeconds: limit } : {}) }),
  );
  await sql(
    t.testDb.url,
    `WITH pod AS (UPDATE pod SET state = 'RUNNING', node_name = 'n1', started_at = $2
                  WHERE job_id = $1 AND name = 'worker-0')
     UPDATE job SET state = 'RUNNING', started_at = $2, min_member = 1 WHERE id = $1`,
    [row.id, STARTED],
  );
  return row.id;
}

it("stops only what is past its limit, the way a cancel stops a job", async () => {
  const over = await running("over", 60);
  const within = await running("within", 3600);
  const unlimited = await running("unlimited", null);
  const cancelled = await running("cancelled", 60);
  await cancelJob(t.store, admin, { id: cancelled });
  const { job: waiting } = await submitJob(t.store, admin, job({ name: "waiting", maxRuntimeSeconds: 1 }));
  // started once, preempted back to PENDING: stopped only when placed again
  const requeued = await running("requeued", 60);
  await setJobState(requeued, "PENDING");
  const generation = await generationOfC1(t);

  expect((await stopJobsPastRuntimeLimit(t.store, admin, { now: at(59) })).stopped).toEqual([]);
  const report = await stopJobsPastRuntimeLimit(t.store, admin, { now: at(60) });
  expect(report).toEqual({
    stopped: [{ job: over, name: "over", cluster: "c1", maxRuntimeSeconds: 60, evicted: 1 }],
    clusters: ["c1"],
  });
  expect(await generationOfC1(t)).toBe(generation + 1);

  const stopped = await jobOf(t, over);
  expect([stopped.state, stopped.finishedAt, stopped.pendingReason]).toEqual(["FAILED", at(60), null]);
  const pods = await podsOf(t, over);
  const reason = "run-time limit exceeded (maxRuntimeSeconds 60)";
  expect(pods.map((x) => [x.name, x.state, x.nodeName, x.message])).toEqual([
    ["worker-0", "RELEASING", "n1", reason],
    ["worker-1", "FAILED", null, reason],
  ]);
  const evictions = await bindRequestsOf(t, over);
  expect(evictions.map((b) => [b.kind, b.state, b.nodeName, b.reason, Number(b.generation)])).toEqual([
    ["EVICT", "PENDING", "n1", reason, generation + 1],
  ]);
  const events = (await eventsOfJobs(t.store, [over], MAX_EVENTS_PAGE))
    .get(over)!
    .filter((e) => e.kind === "job.failed");
  expect(events.map((e) => e.message)).toEqual([
    `job over failed: ${reason}; started 60s ago; evicting 1 pod(s)`,
  ]);

  // the others are as they were; a second pass finds nothing more
  const states = async () =>
    Object.fromEntries(
      (await jobsById(t.store, [within, unlimited, cancelled, waiting.id, requeued])).map((j) => [
        j.name,
        j.state,
      ]),
    );
  expect(await states()).toEqual({
    within: "RUNNING",
    unlimited: "RUNNING",
    cancelled: "CANCELLED",
    waiting: "PENDING",
    requeued: "PENDING",
  });
  expect((await stopJobsPastRuntimeLimit(t.store, admin, { now: at(600) })).stopped).toEqual([]);
  // placed again: stopped at the next look
  await setJobState(requeued, "ADMITTED");
  expect(
    (await stopJobsPastRuntimeLimit(t.store, admin, { now: at(601) })).stopped.map((s) => s.name),
  ).toEqual(["requeued"]);
  expect(
    (await stopJobsPastRuntimeLimit(t.store, admin, { now: at(3600) })).stopped.map((s) => s.name),
  ).toEqual(["within"]);
});
