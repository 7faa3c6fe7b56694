// Usage history: recorded per queue and cluster in buckets, read back decayed, shown by fairShare.
import { prismaOf } from "../../src/store/testing.js";
import { sql } from "../helpers/db.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fairShare } from "../../src/fair-share/fair-share.js";
import { DEFAULT_USAGE_WINDOW, USAGE_BUCKET_SECONDS, decayedAverage } from "../../src/store/domain/usage.js";
import { registerCluster } from "../../src/store/operations/clusters.js";
import { createQueue } from "../../src/store/operations/queues.js";
import { reportNodes } from "../../src/store/operations/report-nodes.js";
import { recordQueueUsage } from "../../src/store/operations/usage.js";
import { recentUsage, usageKey } from "../../src/store/queries/usage.js";
import { openTestStore, type TestStore } from "../helpers/store.js";
import { admin, gpuNode } from "./fixtures.js";

let t: TestStore;
beforeAll(async () => {
  t = await openTestStore();
  await createQueue(t.store, admin, { name: "org" });
  await createQueue(t.store, admin, { name: "team-a", parent: "org" });
  await registerCluster(t.store, admin, { name: "c1" });
  await reportNodes(t.store, admin, { cluster: "c1", complete: true, nodes: [gpuNode("n1", 8)] });
});
afterAll(async () => t?.close());

describe("usage history", () => {
  it("accumulates resource-seconds in a bucket and prunes buckets older than the window", async () => {
    const now = new Date("2026-01-01T12:00:00Z");
    const old = new Date(now.getTime() - (DEFAULT_USAGE_WINDOW.windowSeconds + 3600) * 1000);
    await recordQueueUsage(t.store, {
      cluster: "c1",
      at: old,
      seconds: 60,
      queues: [{ queue: "team-a", allocated: { gpu: 1, cpuMillis: 0, memory: 0 } }],
    });
    for (let i = 0; i < 2; i++) {
      await recordQueueUsage(t.store, {
        cluster: "c1",
        at: now,
        seconds: 30,
        queues: [
          { queue: "team-a", allocated: { gpu: 4, cpuMillis: 2000, memory: 1e9 } },
          { queue: "org", allocated: { gpu: 0, cpuMillis: 0, memory: 0 } }, // nothing held: no row
          { queue: "deleted-meanwhile", allocated: { gpu: 1, cpuMillis: 0, memory: 0 } },
        ],
      });
    }
    const rows = await sql<{ queue: string; gpu: number; cpu: number; memory: number }>(
      t.testDb.url,
      `SELECT queue_name AS queue, gpu_seconds::float8 AS gpu, cpu_milli_seconds::float8 AS cpu,
         memory_byte_seconds::float8 AS memory FROM queue_usage`,
    );
    expect(rows.map((r) => [r.queue, r.gpu, r.cpu, r.memory])).toEqual([["team-a", 240, 120_000, 60e9]]);
  });

  it("reads back a decayed average: recent use counts most, no use means zero", () => {
    const now = new Date("2026-01-01T12:00:00Z");
    const full = DEFAULT_USAGE_WINDOW.windowSeconds;
    const bucket = (ageSeconds: number, gpu: number) => ({
      bucketStart: new Date(now.getTime() - ageSeconds * 1000),
      gpuSeconds: gpu * USAGE_BUCKET_SECONDS,
      cpuMilliSeconds: 0,
      memoryByteSeconds: 0,
    });
    const steady = Array.from({ length: full / USAGE_BUCKET_SECONDS }, (_, i) =>
      bucket((i + 1) * USAGE_BUCKET_SECONDS, 2),
    );
    expect(decayedAverage(steady, now).gpu).toBeCloseTo(2, 1);
    expect(decayedAverage([bucket(USAGE_BUCKET_SECONDS, 8)], now).gpu).toBeGreaterThan(
      decayedAverage([bucket(12 * 3600, 8)], now).gpu,
    );
    expect(decayedAverage([], now)).toEqual({ gpu: 0, cpuMillis: 0, memory: 0 });
  });

  it("shows in fairShare next to what the core computes", async () => {
    const now = new Date("2026-01-01T12:00:00Z");
    const usage = await recentUsage(prismaOf(t.db), now);
    expect(usage.get(usageKey("team-a", "c1"))!.gpu).toBeGreaterThan(0);
    const rows = await fairShare(t.store, { now });
    const teamA = rows.filter((r) => r.queue === "team-a");
    expect(teamA.map((r) => r.cluster)).toEqual(["c1", null]);
    expect(teamA[0]!.usage!.gpu).toBeCloseTo(usage.get(usageKey("team-a", "c1"))!.gpu);
    expect(teamA[1]!.usage).toEqual(teamA[0]!.usage);
    expect(rows.find((r) => r.queue === "org" && r.cluster === "c1")!.usage).toBeNull();
  });
});
