// Retention: history older than the retention period goes (events, closed BindRequests,
// finished jobs with their pods); unfinished jobs stay whatever their age.
import { prismaOf } from "../../src/store/testing.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { cancelJob, createQueue, pruneHistory, submitJob } from "../../src/store/index.js";
import { resolveOptions } from "../../workers/options.js";
import { openTestStore, type TestStore } from "../helpers/store.js";

let s: TestStore;
const actor = { name: "test" };
const DAY = 86_400_000;
const job = (name: string) => ({
  name,
  queue: "team",
  tasks: [{ name: "w", replicas: 2, resources: { cpu: 100 } }],
});

beforeAll(async () => {
  s = await openTestStore();
  await createQueue(s.store, actor, { name: "team" });
});
afterAll(async () => s?.close());

it("prunes events and finished jobs older than the cutoff, and nothing else", async () => {
  const db = prismaOf(s.store);
  const oldDone = (await submitJob(s.store, actor, job("old-done"))).job;
  await cancelJob(s.store, actor, { id: oldDone.id });
  const oldRunning = (await submitJob(s.store, actor, job("old-pending"))).job;
  const recentDone = (await submitJob(s.store, actor, job("recent-done"))).job;
  await cancelJob(s.store, actor, { id: recentDone.id });
  const longAgo = new Date(Date.now() - 40 * DAY);
  await db.job.updateMany({ where: { id: { in: [oldDone.id, oldRunning.id] } }, data: { finishedAt: null } });
  await db.job.update({ where: { id: oldDone.id }, data: { finishedAt: longAgo, createdAt: longAgo } });
  await db.job.update({ where: { id: oldRunning.id }, data: { createdAt: longAgo } });
  await db.event.updateMany({ where: { jobId: { in: [oldDone.id, oldRunning.id] } }, data: { at: longAgo } });
  const recentEvents = await db.event.count({ where: { at: { gt: new Date(Date.now() - DAY) } } });

  const pruned = await pruneHistory(s.store, new Date(Date.now() - 30 * DAY), 1);
  expect(pruned).toMatchObject({ jobs: 1 });
  expect(pruned.events).toBeGreaterThanOrEqual(3);
  expect(
    (await db.job.findMany({ select: { name: true }, orderBy: { name: "asc" } })).map((j) => j.name),
  ).toEqual(["old-pending", "recent-done"]);
  expect(await db.pod.count({ where: { jobId: oldDone.id } })).toBe(0);
  expect(await db.event.count({ where: { at: { lt: new Date(Date.now() - 30 * DAY) } } })).toBe(0);
  expect(await db.event.count()).toBe(recentEvents);
});

it("the workers prune after 30 days unless told otherwise", () => {
  const o = resolveOptions({ databaseUrl: "postgresql://x/y", redisUrl: "redis://127.0.0.1:6379" });
  expect(o.retentionDays).toBe(30);
  expect(() =>
    resolveOptions({ databaseUrl: "postgresql://x/y", redisUrl: "redis://h", retentionDays: -1 }),
  ).toThrow(/retentionDays/);
});
