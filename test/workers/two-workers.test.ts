// Two worker processes share the work: each owns some clusters, and when one stops the other
// takes its clusters over; never two cycles of one cluster at once. Read back from the event log:
// every cycle records its start and end, and per cluster the intervals must not overlap.
import { sql } from "../helpers/db.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { cycleInterval } from "../../workers/index.js";
import { until } from "../agent/until.js";
import { ControlPlane, gpuJob } from "./harness.js";

const CLUSTER = `
nodeGroups:
  - { name: gpu, count: 8, cpu: 64, memory: 512Gi, gpus: 8, gpuModel: A100, gpuMemoryMiB: 81920 }
`;
const CLUSTERS = ["c1", "c2"];
const WORKERS = ["w1", "w2"];

let cp: ControlPlane;

beforeAll(async () => {
  cp = await ControlPlane.start();
  await cp.createQueue("team-a");
  for (const c of CLUSTERS) await cp.addCluster(c, CLUSTER);
  const env = { FLEETQ_LOG_IDLE_CYCLES: "1", FLEETQ_CYCLE_INTERVAL_MS: "100" };
  await Promise.all(WORKERS.map((w) => cp.spawnWorker(w, env)));
}, 300_000); // two processes compile and start beside every other test file
afterAll(async () => cp?.close());

interface Cycle {
  worker: string;
  start: number;
  end: number;
}

async function cyclesByCluster(): Promise<Map<string, Cycle[]>> {
  const out = new Map<string, Cycle[]>(CLUSTERS.map((c) => [c, []]));
  for (const e of [...(await cp.events("cycle.completed")), ...(await cp.events("cycle.failed"))]) {
    const interval = cycleInterval(e);
    if (interval && e.cluster) out.get(e.cluster)?.push(interval);
  }
  for (const list of out.values()) list.sort((a, b) => a.start - b.start);
  return out;
}

async function submitAndRun(from: number, count: number): Promise<void> {
  const jobs: string[] = [];
  for (let i = from; i < from + count; i++) {
    const cluster = i % 3 === 2 ? undefined : CLUSTERS[i % 2];
    jobs.push(await cp.submit({ ...gpuJob(`j${i}`, "team-a", 2, 1), ...(cluster ? { cluster } : {}) }));
  }
  await until(async () => {
    for (const id of jobs) expect((await cp.job(id)).state).toBe("RUNNING");
  }, 120_000);
}

const count = (cycles: Map<string, Cycle[]>, worker: string) =>
  [...cycles.values()].flat().filter((c) => c.worker === worker).length;

it("never runs two cycles of one cluster at once", async () => {
  await submitAndRun(0, 20);
  const first = await until(async () => {
    const byCluster = await cyclesByCluster();
    for (const list of byCluster.values()) expect(list.length).toBeGreaterThanOrEqual(3);
    return byCluster;
  }, 120_000);
  // The busier one stops (SIGTERM: it finishes its cycle first); the other takes over every
  // cluster it did not own, with more work arriving.
  const busier = count(first, "w1") >= count(first, "w2") ? 0 : 1;
  const stopped = cp.children[busier]!;
  const exited = new Promise((r) => stopped.once("exit", r));
  stopped.kill("SIGTERM");
  await exited;
  await submitAndRun(20, 20);
  const cycles = await until(async () => {
    const byCluster = await cyclesByCluster();
    for (const list of byCluster.values())
      expect(list.filter((c) => c.worker === WORKERS[1 - busier]).length).toBeGreaterThanOrEqual(1);
    return byCluster;
  }, 120_000);

  // Some cluster's cycles were run by both processes.
  expect([...cycles.values()].some((list) => new Set(list.map((c) => c.worker)).size === 2)).toBe(true);
  for (const [cluster, list] of cycles) {
    for (let i = 1; i < list.length; i++) {
      const prev = list[i - 1]!;
      const next = list[i]!;
      if (next.start < prev.end)
        throw new Error(
          `${cluster}: cycle of ${next.worker} started at ${new Date(next.start).toISOString()} ` +
            `before the cycle of ${prev.worker} ended at ${new Date(prev.end).toISOString()}`,
        );
    }
  }
  // Every placement was decided once: one BIND per pod.
  const binds = await sql<{ n: number }>(
    cp.api.db.url,
    "SELECT count(*)::int AS n FROM bind_request WHERE kind = 'BIND' GROUP BY pod_id",
  );
  expect(binds).toHaveLength(80);
  expect(binds.every((b) => b.n === 1)).toBe(true);
}, 400_000);
