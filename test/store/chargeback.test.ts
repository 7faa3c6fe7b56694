// Chargeback rollups: a seeded random history of pods changing state, sampled at irregular times
// and rolled up at random moments (twice, concurrently), must give hourly rollups equal to the
// samples they summarise and to the seconds the pods really held, and answer the same once the
// samples are pruned.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  jobUsageOf,
  planUsageReport,
  recordUsageSamples,
  rollUpUsage,
  submitJob,
  usageReport,
  type UsageReportRow,
} from "../../src/store/index.js";
import { deleteCluster, registerCluster } from "../../src/store/operations/clusters.js";
import { createQueue } from "../../src/store/operations/queues.js";
import { reportNodes } from "../../src/store/operations/report-nodes.js";
import { bucketSpans, HOUR_MS, rollupRange, sampleStart } from "../../src/store/domain/chargeback.js";
import { countRows, sql } from "../helpers/db.js";
import { prng } from "../helpers/prng.js";
import type { TestStore } from "../helpers/store.js";
import { openTestStore } from "../helpers/store.js";
import { admin, gpuNode, job, podsOf } from "./fixtures.js";

let t: TestStore;
const START = Date.parse("2026-11-01T00:00:00Z");
const HOLDING = ["BINDING", "RUNNING", "RELEASING"] as const;
const STATES = ["PENDING", ...HOLDING, "SUCCEEDED"] as const;

interface PodModel {
  id: string;
  jobId: string;
  queue: string;
  cluster: string;
  team: string;
  gpus: number;
  cpu: number;
  memory: number;
  state: (typeof STATES)[number];
  node: string | null;
}

const url = () => t.testDb.url;
// The usage tables' timestamps have no time zone: they hold UTC.
const utc = (at: Date | number | string): string => new Date(at).toISOString();
/** SQL for parameter $n, an instant as `utc` gives it, as such a timestamp. */
const utcParam = (n: number) => `($${n}::timestamptz AT TIME ZONE 'UTC')`;

const MODEL_OF: Record<string, string> = { "c1/n1": "A100", "c1/n2": "H100", "c2/n1": "A100" };

beforeAll(async () => {
  t = await openTestStore();
  for (const q of ["team-a", "team-b"]) await createQueue(t.store, admin, { name: q });
  for (const c of ["c1", "c2"]) {
    await registerCluster(t.store, admin, { name: c });
    const nodes = c === "c1" ? [gpuNode("n1"), { ...gpuNode("n2"), gpuModel: "H100" }] : [gpuNode("n1")];
    await reportNodes(t.store, { name: `agent:${c}` }, { cluster: c, complete: true, nodes });
  }
});
afterAll(async () => t?.close());

async function makePods(): Promise<PodModel[]> {
  const pods: PodModel[] = [];
  for (let i = 0; i < 6; i++) {
    const queue = i % 2 ? "team-b" : "team-a";
    const cluster = i < 4 ? "c1" : "c2";
    const team = ["vision", "nlp", "speech"][i % 3]!;
    const gpu = i === 5 ? 0 : 1 + (i % 2);
    const { job: j } = await submitJob(
      t.store,
      admin,
      job({
        name: `j${i}`,
        queue,
        cluster,
        labels: [{ key: "team", value: team }],
        tasks: [{ name: "w", replicas: 2, resources: { cpu: 1000 * (i + 1), memory: "2Gi", gpu } }],
      }),
    );
    const rows = await podsOf(t, j.id);
    await sql(url(), "UPDATE job SET cluster_name = $2 WHERE id = $1", [j.id, cluster]);
    for (const p of rows)
      pods.push({
        id: p.id,
        jobId: j.id,
        queue,
        cluster,
        team,
        gpus: gpu,
        cpu: p.cpuMillis,
        memory: Number(p.memory),
        state: "PENDING",
        node: null,
      });
  }
  return pods;
}

type Key = string;
const keyOf = (hour: number, p: PodModel, model: string) =>
  `${hour}|${p.queue}|${p.cluster}|${model}|${p.team}`;

/** What the pods held, per hour, queue, cluster, GPU model and team: seconds × requests. */
function hold(expected: Map<Key, number[]>, pods: PodModel[], from: number, to: number): void {
  for (const s of bucketSpans(new Date(from), new Date(to))) {
    const hour = Math.floor(s.bucket.getTime() / HOUR_MS) * HOUR_MS;
    for (const p of pods) {
      if (!(HOLDING as readonly string[]).includes(p.state)) continue;
      const model = p.gpus > 0 ? MODEL_OF[`${p.cluster}/${p.node}`]! : "";
      const k = keyOf(hour, p, model);
      const v = expected.get(k) ?? [0, 0, 0, 0, 0, 0];
      const running = p.state === "RUNNING" ? 1 : 0;
      const add = [p.gpus, p.cpu, p.memory].map((x) => x * s.seconds);
      add.forEach((x, i) => {
        v[i]! += x;
        v[i + 3]! += x * running;
      });
      expected.set(k, v);
    }
  }
}

const hourly = (rows: UsageReportRow[]) =>
  new Map(
    rows.map((r) => [
      `${r.periodStart.getTime()}|${r.queue}|${r.cluster}|${r.gpuModel}|${r.label}`,
      [r.allocated, r.used].flatMap((h) => [
        h.gpuHours * 3600,
        h.cpuCoreHours * 3_600_000,
        h.memoryGiBHours * 3600 * 2 ** 30,
      ]),
    ]),
  );

const report = (from: number, to: number) =>
  usageReport(
    t.store,
    planUsageReport({
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
      groupBy: ["QUEUE", "CLUSTER", "GPU_MODEL", "LABEL"],
      labelKey: "team",
      step: "HOUR",
    }),
    null,
  );

function expectSame(actual: Map<Key, number[]>, expected: Map<Key, number[]>): void {
  expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
  for (const [k, v] of expected) {
    for (const [i, x] of v.entries()) expect(actual.get(k)![i]).toBeCloseTo(x, 3);
  }
}

describe("usage rollups", () => {
  it("equal what the pods held and the samples they summarise, before and after pruning", async () => {
    const r = prng(20261101);
    const pods = await makePods();
    const expected = new Map<Key, number[]>();
    let now = START;
    const last = new Map<string, number>();
    for (let step = 0; step < 90; step++) {
      now += (30 + r.int(150)) * 1000;
      for (const p of pods) {
        if (r.next() < 0.3) {
          p.state = r.pick(STATES);
          p.node = (HOLDING as readonly string[]).includes(p.state)
            ? p.cluster === "c1"
              ? r.pick(["n1", "n2"])
              : "n1"
            : null;
          await sql(url(), "UPDATE pod SET state = $2, node_name = $3 WHERE id = $1", [
            p.id,
            p.state,
            p.node,
          ]);
        }
      }
      for (const cluster of ["c1", "c2"]) {
        const prev = last.get(cluster) ?? now - 60_000;
        const seconds = await recordUsageSamples(t.store, {
          cluster,
          at: new Date(now),
          seconds: 60,
          maxSeconds: 300,
        });
        expect(seconds).toBeCloseTo(Math.min(300, (now - prev) / 1000), 6);
        hold(
          expected,
          pods.filter((p) => p.cluster === cluster),
          now - seconds * 1000,
          now,
        );
        last.set(cluster, now);
      }
      // A second sample at the same instant (another replica) adds nothing.
      if (r.next() < 0.1)
        expect(
          await recordUsageSamples(t.store, {
            cluster: "c1",
            at: new Date(now),
            seconds: 60,
            maxSeconds: 300,
          }),
        ).toBe(0);
      if (r.next() < 0.15) {
        const c = r.pick(["c1", "c2"]);
        await Promise.all([
          rollUpUsage(t.store, c, { now: new Date(now) }),
          rollUpUsage(t.store, c, { now: new Date(now) }),
        ]);
      }
    }
    for (const c of ["c1", "c2"]) await rollUpUsage(t.store, c, { now: new Date(now) });
    const rolledTo = Math.floor(now / HOUR_MS) * HOUR_MS;
    const whole = new Map([...expected].filter(([k]) => Number(k.split("|")[0]) < rolledTo));
    const before = hourly(await report(START, rolledTo));
    expectSame(before, whole);

    // The rollups equal the samples of their hours, summed in SQL the other way round.
    const samples = await sql<{ k: string; ag: number }>(
      url(),
      `SELECT (extract(epoch FROM date_trunc('hour', bucket_start)) * 1000)::bigint || '|' || queue_name || '|' ||
              cluster_name || '|' || gpu_model || '|' || (labels ->> 'team') AS k, sum(alloc_gpu_seconds) AS ag
       FROM usage_sample WHERE bucket_start < ${utcParam(1)} GROUP BY 1`,
      [utc(rolledTo)],
    );
    for (const s of samples.filter((x) => x.ag > 0)) expect(before.get(s.k)![0]).toBeCloseTo(s.ag, 3);

    // A day later the samples are gone; the rollups, and a rerun of the rollup, are unchanged.
    for (const c of ["c1", "c2"]) {
      const pruned = await rollUpUsage(t.store, c, { now: new Date(now + 2 * 86_400_000) });
      expect(pruned.from).toBeNull();
    }
    expect(await countRows(url(), "usage_sample", `bucket_start < ${utcParam(1)}`, [utc(rolledTo)])).toBe(0);
    expectSame(hourly(await report(START, rolledTo)), whole);

    // Daily and monthly answers (read from usage_day) equal the hourly ones summed.
    const total = (rows: UsageReportRow[]) => rows.reduce((s, x) => s + x.allocated.gpuHours, 0);
    const day = planUsageReport({ from: "2026-11-01", to: "2026-11-02", groupBy: [], step: "DAY" });
    expect(day.days).not.toBeNull();
    expect(total(await usageReport(t.store, day, null))).toBeCloseTo(total(await report(START, rolledTo)), 6);

    // Each job's own usage: its samples, rolled up or not.
    const usage = await jobUsageOf(t.store, [...new Set(pods.map((p) => p.jobId))]);
    const all = [...expected.values()].reduce((s, v) => s + v[0]!, 0);
    expect([...usage.values()].reduce((s, u) => s + u.allocated.gpuHours * 3600, 0)).toBeCloseTo(all, 3);
  });
});

describe("a deleted cluster", () => {
  it("has its last, partly sampled hour rolled up, and leaves no samples behind", async () => {
    await registerCluster(t.store, admin, { name: "c3" });
    await reportNodes(
      t.store,
      { name: "agent:c3" },
      { cluster: "c3", complete: true, nodes: [gpuNode("n1")] },
    );
    const { job: j } = await submitJob(t.store, admin, job({ name: "last", cluster: "c3" }));
    await sql(url(), "UPDATE job SET cluster_name = 'c3' WHERE id = $1", [j.id]);
    await sql(url(), "UPDATE pod SET state = 'RUNNING', node_name = 'n1' WHERE job_id = $1", [j.id]);
    const at = new Date("2026-12-01T00:30:00Z");
    expect(await recordUsageSamples(t.store, { cluster: "c3", at, seconds: 1800 })).toBe(1800);
    await sql(url(), "UPDATE pod SET state = 'SUCCEEDED', node_name = NULL WHERE job_id = $1", [j.id]);
    await sql(url(), `UPDATE job SET state = 'SUCCEEDED', finished_at = ${utcParam(2)} WHERE id = $1`, [
      j.id,
      utc(at),
    ]);
    await deleteCluster(t.store, admin, { name: "c3" });
    const plan = planUsageReport({ from: "2026-12-01", to: "2026-12-02", groupBy: ["CLUSTER"] });
    const [row] = await usageReport(t.store, plan, null);
    expect([row!.cluster, row!.allocated.gpuHours]).toEqual(["c3", 1]);
    expect(await countRows(url(), "usage_sample", "cluster_name = 'c3'")).toBe(0);
    expect(await countRows(url(), "usage_mark", "cluster_name = 'c3'")).toBe(0);
  });
});

describe("retention", () => {
  it("drops rollups before the cutoff, deleted clusters' too, and keeps the rest", async () => {
    const count = async (before: string) => ({
      hours: await countRows(url(), "usage_hour", `hour < ${utcParam(1)}`, [utc(before)]),
      days: await countRows(url(), "usage_day", `day < ${utcParam(1)}`, [utc(before)]),
    });
    expect((await count("2026-11-25")).hours).toBeGreaterThan(0);
    await rollUpUsage(t.store, "c1", { now: new Date("2026-12-05T12:00:00Z"), retentionDays: 10 });
    expect(await count("2026-11-25")).toEqual({ hours: 0, days: 0 });
    expect(await countRows(url(), "usage_hour", "cluster_name = 'c3'")).toBeGreaterThan(0);
    await rollUpUsage(t.store, "c1", { now: new Date("2027-01-01T00:00:00Z"), retentionDays: 10 });
    expect(await count("2027-01-01")).toEqual({ hours: 0, days: 0 });
  });
});

describe("sampling and rollup ranges", () => {
  it("split an interval at bucket edges, cap gaps, and roll only wholly sampled hours", () => {
    const at = (s: string) => new Date(`2026-11-01T${s}Z`);
    expect(bucketSpans(at("00:04:00"), at("00:11:00")).map((s) => s.seconds)).toEqual([60, 300, 60]);
    expect(sampleStart(at("00:00:00"), at("01:00:00"), 60, 120)).toEqual(at("00:58:00"));
    expect(sampleStart(null, at("01:00:00"), 60, 120)).toEqual(at("00:59:00"));
    expect(sampleStart(at("01:00:00"), at("01:00:00"), 60, 120)).toBeNull();
    expect(rollupRange(null, at("02:30:00"), at("00:10:00"))).toEqual({
      from: at("00:00:00"),
      to: at("02:00:00"),
    });
    expect(rollupRange(at("02:00:00"), at("02:59:00"), null)).toBeNull();
  });
});
