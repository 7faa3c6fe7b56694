// Retention: history older than the retention period goes (events, closed BindRequests,
// finished jobs with their pods); unfinished jobs stay whatever their age.
import { afterAll, beforeAll, expect, it } from "vitest";
import { cancelJob, createQueue, pruneHistory, submitJob } from "../../src/store/index.js";
import { pino } from "pino";
import { workerOptionsFromEnv } from "../../src/cli/worker-options.js";
import { resolveOptions } from "../../workers/options.js";
import { countRows, sql } from "../helpers/db.js";
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
  const url = s.testDb.url;
  const oldDone = (await submitJob(s.store, actor, job("old-done"))).job;
  await cancelJob(s.store, actor, { id: oldDone.id });
  const oldRunning = (await submitJob(s.store, actor, job("old-pending"))).job;
  const recentDone = (await submitJob(s.store, actor, job("recent-done"))).job;
  await cancelJob(s.store, actor, { id: recentDone.id });
  const longAgo = new Date(Date.now() - 40 * DAY);
  const old = [oldDone.id, oldRunning.id];
  await sql(url, "UPDATE job SET created_at = $2, finished_at = NULL WHERE id = ANY($1::uuid[])", [
    old,
    longAgo,
  ]);
  await sql(url, "UPDATE job SET finished_at = $2 WHERE id = $1", [oldDone.id, longAgo]);
  await sql(url, "UPDATE event SET at = $2 WHERE job_id = ANY($1::uuid[])", [old, longAgo]);
  const recentEvents = await countRows(url, "event", "at > $1", [new Date(Date.now() - DAY)]);

  const pruned = await pruneHistory(s.store, new Date(Date.now() - 30 * DAY), 1);
  expect(pruned).toMatchObject({ jobs: 1 });
  expect(pruned.events).toBeGreaterThanOrEqual(3);
  expect((await sql<{ name: string }>(url, "SELECT name FROM job ORDER BY name")).map((j) => j.name)).toEqual(
    ["old-pending", "recent-done"],
  );
  expect(await countRows(url, "pod", "job_id = $1", [oldDone.id])).toBe(0);
  expect(await countRows(url, "event", "at < $1", [new Date(Date.now() - 30 * DAY)])).toBe(0);
  expect(await countRows(url, "event")).toBe(recentEvents);
});

it("the workers prune after 30 days unless told otherwise", () => {
  const o = resolveOptions({ databaseUrl: "postgresql://x/y", redisUrl: "redis://127.0.0.1:6379" });
  expect(o.retentionDays).toBe(30);
  expect(() =>
    resolveOptions({ databaseUrl: "postgresql://x/y", redisUrl: "redis://h", retentionDays: -1 }),
  ).toThrow(/retentionDays/);
});

it("the workers keep usage rollups 400 days unless FLEETQ_USAGE_RETENTION_DAYS says otherwise", () => {
  const base = { databaseUrl: "postgresql://x/y", redisUrl: "redis://127.0.0.1:6379" };
  expect(resolveOptions(base).usageRetentionDays).toBe(400);
  const env = { FLEETQ_USAGE_RETENTION_DAYS: "30" };
  expect(
    resolveOptions(workerOptionsFromEnv({ ...base, logger: pino({ level: "silent" }) }, env))
      .usageRetentionDays,
  ).toBe(30);
  for (const bad of [0, -1, 1.5, Number.NaN])
    expect(() => resolveOptions({ ...base, usageRetentionDays: bad })).toThrow(/usageRetentionDays/);
});
