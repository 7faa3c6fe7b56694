// Usage history for time-based fair share, against real PostgreSQL and the real core: the
// recorder writes what each queue (and its parent) holds; loadSnapshot, when asked, gives each
// queue its decayed usage as a fraction of the cluster's capacity; and the proportion plugin then
// gives the queue that used the cluster lately a smaller share than the one that did not.
import { afterAll, beforeAll, expect, it } from "vitest";
import { computeFairShare, defaultSchedulerConfig } from "../../src/core/index.js";
import { decayedAverage, DEFAULT_USAGE_WINDOW, type UsageBucket } from "../../src/store/domain/usage.js";
import { fairShareConfig } from "../../src/fair-share/fair-share.js";
import { ClusterCache, loadSnapshot } from "../../src/store/index.js";
import { createQueue, setQueueQuota } from "../../src/store/operations/queues.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { recordUsage } from "../../workers/index.js";
import { runCycle } from "../helpers/cycle.js";
import { sql } from "../helpers/db.js";
import { openTestStore, type TestStore } from "../helpers/store.js";
import { addC1, admin, job } from "../store/fixtures.js";

let t: TestStore;
const config = defaultSchedulerConfig();

beforeAll(async () => {
  t = await openTestStore();
  await createQueue(t.store, admin, { name: "org" });
  await createQueue(t.store, admin, { name: "team-a", parent: "org" });
  await createQueue(t.store, admin, { name: "team-b", parent: "org" });
  for (const queue of ["team-a", "team-b"])
    await setQueueQuota(t.store, admin, { queue, resource: "GPU", deserved: 0, overQuotaWeight: 1 });
  await addC1(t.store);
});
afterAll(async () => t?.close());

it("records usage and feeds it, decayed, into the fair shares", async () => {
  // team-a holds 4 of the 8 GPUs for an hour.
  await submitJob(
    t.store,
    admin,
    job({ cluster: "c1", queue: "team-a", tasks: [{ name: "w", replicas: 4, resources: { gpu: 1 } }] }),
  );
  await runCycle(t.store, "c1");
  const now = new Date();
  expect(await recordUsage(t.store, config, 3600, { window: DEFAULT_USAGE_WINDOW, now })).toBe(1);
  const rows = await sql<UsageBucket & { queueName: string }>(
    t.testDb.url,
    `SELECT queue_name AS "queueName", bucket_start AS "bucketStart", gpu_seconds AS "gpuSeconds",
       cpu_milli_seconds AS "cpuMilliSeconds", memory_byte_seconds AS "memoryByteSeconds"
     FROM queue_usage ORDER BY queue_name`,
  );
  expect(rows.map((r) => [r.queueName, r.gpuSeconds])).toEqual([
    ["org", 4 * 3600],
    ["team-a", 4 * 3600],
  ]);
  // The chargeback sample of the same interval: the job's pods hold (BINDING), none runs yet.
  const samples = await sql<{
    queueName: string;
    gpuModel: string;
    allocGpuSeconds: number;
    usedGpuSeconds: number;
  }>(
    t.testDb.url,
    `SELECT queue_name AS "queueName", gpu_model AS "gpuModel", alloc_gpu_seconds AS "allocGpuSeconds",
       used_gpu_seconds AS "usedGpuSeconds"
     FROM usage_sample`,
  );
  expect(samples.reduce((s, r) => s + r.allocGpuSeconds, 0)).toBeCloseTo(4 * 3600, 6);
  expect(
    samples.every((r) => r.queueName === "team-a" && r.gpuModel === "A100" && r.usedGpuSeconds === 0),
  ).toBe(true);

  // Both teams now want the whole cluster.
  for (const queue of ["team-a", "team-b"])
    await submitJob(
      t.store,
      admin,
      job({
        name: `more-${queue}`,
        cluster: "c1",
        queue,
        tasks: [{ name: "w", replicas: 8, resources: { gpu: 1 } }],
      }),
    );

  const plain = await loadSnapshot(t.store, "c1", { now: now.getTime() });
  expect(plain.snapshot.queues.every((q) => q.usage === null)).toBe(true);
  const timed = await loadSnapshot(t.store, "c1", { now: now.getTime(), usage: DEFAULT_USAGE_WINDOW });
  const usage = new Map(timed.snapshot.queues.map((q) => [q.name, q.usage]));
  const expected =
    decayedAverage(
      rows.filter((r) => r.queueName === "team-a"),
      now,
    ).gpu / 8;
  expect(usage.get("team-a")!.gpu).toBeCloseTo(expected, 9);
  expect(usage.get("team-a")!.gpu).toBeGreaterThan(0);
  expect(usage.get("team-b") ?? null).toBeNull();

  const share = (s: typeof plain.snapshot) =>
    new Map(computeFairShare(s, fairShareConfig(config)).map((q) => [q.queue, q.fairShare.gpu]));
  const without = share(plain.snapshot);
  const withUsage = share(timed.snapshot);
  expect(without.get("team-a")).toBe(without.get("team-b"));
  expect(withUsage.get("team-b")!).toBeGreaterThan(withUsage.get("team-a")!);
});

it("records from a worker's cached view what a full read records, reading only what changed", async () => {
  const now = new Date(Date.now() + 7 * 86_400_000);
  const recorded = async () => {
    const rows = await sql<{ queue: string; gpu: number; cpu: number; memory: number }>(
      t.testDb.url,
      `DELETE FROM queue_usage WHERE bucket_start >= $1
       RETURNING queue_name AS queue, gpu_seconds AS gpu, cpu_milli_seconds AS cpu, memory_byte_seconds AS memory`,
      [new Date(now.getTime() - 3_600_000)],
    );
    return rows.sort((a, b) => (a.queue < b.queue ? -1 : 1)).map((r) => [r.queue, r.gpu, r.cpu, r.memory]);
  };
  const cache = new ClusterCache(t.store);
  await cache.refresh("c1");
  await submitJob(t.store, admin, job({ name: "since", cluster: "c1", queue: "team-b" }));
  await runCycle(t.store, "c1");
  await recordUsage(t.store, config, 60, { now });
  const full = await recorded();
  expect(full.length).toBeGreaterThan(0);
  const loads = cache.fullLoads;
  await recordUsage(t.store, config, 60, { now, views: { cache, usage: undefined } });
  expect(await recorded()).toEqual(full);
  expect(cache.fullLoads).toBe(loads);
  expect(cache.lastRefresh.get("c1")).toBe("delta");
});
