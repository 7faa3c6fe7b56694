// `fleetq usage` against the real API: a day of hourly rollups for two queues on two clusters,
// shown as a table, CSV and JSON, per day, and refusals with exit code 3.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStore, openDatabase, seedUsageRollups, type Database } from "../../src/store/index.js";
import { startTestApi, type TestApi } from "../helpers/api.js";
import { runCli } from "./run-cli.js";

let t: TestApi;
let db: Database;
const usage = (args: string[]) =>
  runCli(["usage", ...args], { url: t.url.replace(/\/graphql$/, ""), token: t.adminToken });
const RANGE = ["--from", "2026-11-01", "--to", "2026-11-03"];

beforeAll(async () => {
  t = await startTestApi();
  db = await openDatabase(t.db.url);
  await seedUsageRollups(createStore(db), {
    queues: ["team-a", "team-b"],
    clusters: ["c1", "c2"],
    from: new Date("2026-11-01T00:00:00Z"),
    hours: 48,
  });
}, 60_000);
afterAll(async () => {
  await db?.close();
  await t?.close();
});

describe("fleetq usage", () => {
  it("prints a short table per queue and cluster", async () => {
    const r = await usage([...RANGE, "--by", "queue,cluster"]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^QUEUE\s+CLUSTER\s+GPU-H\s+USED GPU-H\s+CPU-CORE-H\s+MEM-GIB-H\s+COST$/);
    expect(lines.slice(1).map((l) => l.split(/\s+/).slice(0, 3))).toEqual([
      ["team-a", "c1", "216.0"],
      ["team-a", "c2", "216.0"],
      ["team-b", "c1", "216.0"],
      ["team-b", "c2", "216.0"],
    ]);
    expect(lines[1]).toMatch(/\s-$/);
  });

  it("gives CSV and JSON with every field, per day", async () => {
    const csv = await usage([...RANGE, "--by", "queue", "--step", "day", "-o", "csv"]);
    expect(csv.code, csv.stderr).toBe(0);
    const [header, ...rows] = csv.stdout.trimEnd().split("\n");
    expect(header).toBe(
      "period_start,period_end,queue,cluster,gpu_model,label,gpu_hours,cpu_core_hours,memory_gib_hours,used_gpu_hours,used_cpu_core_hours,used_memory_gib_hours,cost",
    );
    expect(rows).toHaveLength(4);
    expect(rows[0]).toMatch(/^2026-11-01T00:00:00.000Z,2026-11-02T00:00:00.000Z,team-a,,,,\d/);
    const json = JSON.parse((await usage([...RANGE, "--by", "queue", "--step", "day", "-o", "json"])).stdout);
    expect(json).toHaveLength(4);
    expect(rows.map((l) => Number(l.split(",")[6]))).toEqual(
      json.map((r: { allocated: { gpuHours: number } }) => r.allocated.gpuHours),
    );
  });

  it("refuses bad options and bad ranges with exit code 3", async () => {
    const byRefused = await usage([...RANGE, "--by", "team"]);
    expect([byRefused.code, byRefused.stderr]).toEqual([
      3,
      expect.stringContaining('--by: "team" is not one of'),
    ]);
    const backwards = await usage(["--from", "2026-11-03", "--to", "2026-11-01"]);
    expect([backwards.code, backwards.stderr]).toEqual([3, expect.stringContaining("to")]);
    expect((await usage([...RANGE, "--step", "week"])).code).toBe(3);
  });
});
