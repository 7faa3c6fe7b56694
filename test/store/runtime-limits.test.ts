// stopJobsPastRuntimeLimit on real PostgreSQL, at a given time: only unfinished jobs whose limit
// has passed since they started are stopped — pods on nodes RELEASING with an EVICT request each,
// the others FAILED, the job FAILED with its event — and the cluster's fence moves; jobs within
// their limit, without one, never started, or already finished are left alone.
import { prismaOf } from "../../src/store/testing.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { cancelJob } from "../../src/store/operations/jobs.js";
import { stopJobsPastRuntimeLimit } from "../../src/store/operations/runtime-limits.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import type { TestStore } from "../helpers/store.js";
import { admin, generationOfC1, job, storeWithC1 } from "./fixtures.js";

let t: TestStore;
beforeAll(async () => {
  t = await storeWithC1();
});
afterAll(async () => t?.close());

const STARTED = new Date("2026-01-01T10:00:00Z");
const at = (seconds: number) => new Date(STARTED.getTime() + seconds * 1000);

/** A job on c1 that started at STARTED: pod 0 RUNNING on n1, pod 1 still PENDING. */
async function running(name: string, limit: number | null): Promise<string> {
  const { job: row } = await submitJob(
    t.store,
    admin,
    job({ name, cluster: "c1", ...(limit ? { maxRuntimeSeconds: limit } : {}) }),
  );
  const p = prismaOf(t.db);
  await p.job.update({ where: { id: row.id }, data: { state: "RUNNING", startedAt: STARTED, minMember: 1 } });
  await p.pod.update({
    where: { jobId_name: { jobId: row.id, name: "worker-0" } },
    data: { state: "RUNNING", nodeName: "n1", startedAt: STARTED },
  });
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
  await prismaOf(t.db).job.update({ where: { id: requeued }, data: { state: "PENDING" } });
  const p = prismaOf(t.db);
  const generation = await generationOfC1(t);

  expect((await stopJobsPastRuntimeLimit(t.store, admin, { now: at(59) })).stopped).toEqual([]);
  const report = await stopJobsPastRuntimeLimit(t.store, admin, { now: at(60) });
  expect(report).toEqual({
    stopped: [{ job: over, name: "over", cluster: "c1", maxRuntimeSeconds: 60, evicted: 1 }],
    clusters: ["c1"],
  });
  expect(await generationOfC1(t)).toBe(generation + 1);

  const stopped = await p.job.findUniqueOrThrow({ where: { id: over } });
  expect([stopped.state, stopped.finishedAt, stopped.pendingReason]).toEqual(["FAILED", at(60), null]);
  const pods = await p.pod.findMany({ where: { jobId: over }, orderBy: { name: "asc" } });
  const reason = "run-time limit exceeded (maxRuntimeSeconds 60)";
  expect(pods.map((x) => [x.name, x.state, x.nodeName, x.message])).toEqual([
    ["worker-0", "RELEASING", "n1", reason],
    ["worker-1", "FAILED", null, reason],
  ]);
  const evictions = await p.bindRequest.findMany({ where: { jobId: over } });
  expect(evictions.map((b) => [b.kind, b.state, b.nodeName, b.reason, Number(b.generation)])).toEqual([
    ["EVICT", "PENDING", "n1", reason, generation + 1],
  ]);
  const events = await p.event.findMany({ where: { jobId: over, kind: "job.failed" } });
  expect(events.map((e) => e.message)).toEqual([
    `job over failed: ${reason}; started 60s ago; evicting 1 pod(s)`,
  ]);

  // the others are as they were; a second pass finds nothing more
  const states = async () =>
    Object.fromEntries(
      (
        await p.job.findMany({ where: { id: { in: [within, unlimited, cancelled, waiting.id, requeued] } } })
      ).map((j) => [j.name, j.state]),
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
  await p.job.update({ where: { id: requeued }, data: { state: "ADMITTED" } });
  expect(
    (await stopJobsPastRuntimeLimit(t.store, admin, { now: at(601) })).stopped.map((s) => s.name),
  ).toEqual(["requeued"]);
  expect(
    (await stopJobsPastRuntimeLimit(t.store, admin, { now: at(3600) })).stopped.map((s) => s.name),
  ).toEqual(["within"]);
});
