// Bad worker options and scheduler configurations are refused before anything starts, with the
// option or the file and field named.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { schedulerConfigFromFile, startWorkers } from "../../workers/index.js";
import { resolveSchedulerConfig } from "../../workers/scheduler-config.js";
import { TEST_REDIS_URL } from "../helpers/redis.js";
import { tempDir } from "../helpers/temp-dir.js";

const base = { databaseUrl: "postgresql://postgres@127.0.0.1:5432/unused", redisUrl: TEST_REDIS_URL };
const dir = tempDir("fleetq-workers");
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};

describe("startWorkers options", () => {
  it.each([
    [{ databaseUrl: "" }, /databaseUrl is required/],
    [{ redisUrl: "127.0.0.1:6379" }, /redisUrl must be a redis:\/\/ URL/],
    [{ cycleIntervalMs: 0 }, /cycleIntervalMs must be a positive number of milliseconds \(got 0\)/],
    [{ sweepIntervalMs: Number.NaN }, /sweepIntervalMs must be a positive number/],
    [{ readmitAfterMs: -5 }, /readmitAfterMs must be a number >= 0 \(got -5\)/],
    [{ admissionBatch: 2.5 }, /admissionBatch must be a positive integer/],
    [{ bindBackoff: { baseMs: 1000, maxMs: 10 } }, /bindBackoff.maxMs must be >= bindBackoff.baseMs/],
    [{ estimateIntervalMs: -1 }, /estimateIntervalMs must be a number >= 0 \(got -1\)/],
    [{ estimateHorizonSeconds: 0 }, /estimateHorizonSeconds must be a positive number of seconds/],
    [{ estimateMaxSessions: 1.5 }, /estimateMaxSessions must be a positive integer/],
    [{ estimateBudgetMs: 0 }, /estimateBudgetMs must be a positive number of milliseconds/],
    [{ estimateCpuShare: 0 }, /estimateCpuShare must be a number above 0 and at most 1 \(got 0\)/],
    [{ estimateCpuShare: 1.5 }, /estimateCpuShare must be a number above 0 and at most 1 \(got 1.5\)/],
    [
      { timeBasedFairShare: { halfLifeSeconds: 0 } },
      /timeBasedFairShare.halfLifeSeconds must be a positive number/,
    ],
  ])("refuses %j", async (bad, message) => {
    await expect(startWorkers({ ...base, ...bad })).rejects.toThrow(message);
  });

  it("refuses a scheduler configuration naming an unknown plugin", async () => {
    await expect(
      startWorkers({
        ...base,
        schedulerConfig: {
          actions: ["allocate"],
          tiers: [{ plugins: [{ name: "nope" }] }],
          queueDepthPerAction: {},
          session: resolveSchedulerConfig(undefined, {}).session,
        },
      }),
    ).rejects.toThrow(/unknown plugin nope/);
  });
});

describe("FLEETQ_SCHEDULER_CONFIG", () => {
  it("reads a KAI-shaped file", () => {
    const p = file(
      "ok.yaml",
      "actions: allocate, reclaim\ntiers:\n  - plugins: [{ name: predicates }, { name: proportion }]\n",
    );
    const config = resolveSchedulerConfig(undefined, { FLEETQ_SCHEDULER_CONFIG: p });
    expect(config.actions).toEqual(["allocate", "reclaim"]);
    expect(config.tiers[0]!.plugins.map((x) => x.name)).toEqual(["predicates", "proportion"]);
  });

  it("uses the core's defaults when unset", () => {
    expect(resolveSchedulerConfig(undefined, {}).actions).toEqual([
      "allocate",
      "consolidation",
      "reclaim",
      "preempt",
      "stalegangeviction",
    ]);
  });

  it("names the file and the field of a bad configuration", () => {
    const p = file("bad.yaml", "tiers:\n  - plugins: [{ name: predicates }, { name: nosuch }]\n");
    expect(() => schedulerConfigFromFile(p)).toThrow(`${p}: tiers[0].plugins[1].name: unknown plugin nosuch`);
    const q = file("action.yaml", "actions: [allocate, shuffle]\n");
    expect(() => schedulerConfigFromFile(q)).toThrow(/action.yaml: actions\[1\]: unknown action "shuffle"/);
  });

  it("says when the file cannot be read", () => {
    expect(() =>
      resolveSchedulerConfig(undefined, { FLEETQ_SCHEDULER_CONFIG: path.join(dir, "missing.yaml") }),
    ).toThrow(/FLEETQ_SCHEDULER_CONFIG: cannot read .*missing.yaml/);
  });
});

describe("fleetq worker", () => {
  const run = (env: Record<string, string>) =>
    spawnSync(process.execPath, ["bin/fleetq.mjs", "worker", "--metrics-port", "0"], {
      cwd: path.resolve(import.meta.dirname, "../.."),
      env: { PATH: process.env.PATH ?? "", ...env },
      encoding: "utf8",
      timeout: 60_000,
    });

  it("refuses to start without DATABASE_URL (exit 3)", () => {
    const r = run({});
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/fleetq worker needs DATABASE_URL/);
  });

  it("refuses a number variable that is not a number (exit 3)", () => {
    const r = run({ DATABASE_URL: base.databaseUrl, FLEETQ_CYCLE_INTERVAL_MS: "soon" });
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/FLEETQ_CYCLE_INTERVAL_MS must be a number \(got "soon"\)/);
  });

  it("refuses a bad scheduler configuration with the reason (exit 3)", () => {
    const p = file("main-bad.yaml", "actions: [teleport]\n");
    const r = run({ DATABASE_URL: base.databaseUrl, FLEETQ_SCHEDULER_CONFIG: p });
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/main-bad.yaml: actions\[0\]: unknown action "teleport"/);
  });
});
