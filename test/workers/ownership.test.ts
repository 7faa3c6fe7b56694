// Cluster ownership across worker processes (`fleetq worker`): six clusters spread two by two over
// three workers; a worker stopped with SIGTERM hands its clusters over before it exits; one killed
// with SIGKILL keeps them until its leases lapse, then the last worker takes them; work goes on
// on every cluster throughout. Read back from the API (each cluster's owner) and the event log:
// per cluster, no two cycles ever overlap, and every pod was bound exactly once.
import { afterAll, beforeAll, expect, it } from "vitest";
import { cycleInterval } from "../../workers/index.js";
import { until } from "../agent/until.js";
import { sql } from "../helpers/db.js";
import { ControlPlane, gpuJob } from "./harness.js";

const CLUSTER = `
nodeGroups:
  - { name: gpu, count: 4, cpu: 64, memory: 512Gi, gpus: 8, gpuModel: A100, gpuMemoryMiB: 81920 }
`;
const CLUSTERS = ["c1", "c2", "c3", "c4", "c5", "c6"];
const WORKERS = ["w1", "w2", "w3"];

let cp: ControlPlane;

beforeAll(async () => {
  cp = await ControlPlane.start();
  await cp.createQueue("team-a");
  for (const c of CLUSTERS) await cp.addCluster(c, CLUSTER);
  const env = { FLEETQ_LOG_IDLE_CYCLES: "1", FLEETQ_CYCLE_INTERVAL_MS: "200" };
  await Promise.all(WORKERS.map((w) => cp.spawnWorker(w, env)));
}, 300_000); // three processes compile and start beside every other test file
afterAll(async () => cp?.close());

async function owners(): Promise<Map<string, string | null>> {
  const r = await cp.admin<{ clusters: { name: string; owner: { worker: string } | null }[] }>(
    "query { clusters { name owner { worker } } }",
  );
  return new Map(r.clusters.map((c) => [c.name, c.owner?.worker ?? null]));
}

const countOf = (o: Map<string, string | null>, w: string) => [...o.values()].filter((x) => x === w).length;

let round = 0;
async function runOnEveryCluster(): Promise<void> {
  const jobs: string[] = [];
  for (const c of CLUSTERS)
    jobs.push(await cp.submit({ ...gpuJob(`r${round}-${c}`, "team-a", 2, 1), cluster: c }));
  round++;
  await until(async () => {
    for (const id of jobs) expect((await cp.job(id)).state).toBe("RUNNING");
  }, 120_000);
}

it("spreads clusters evenly, hands them over on SIGTERM at once, takes a killed worker's after its lease", async () => {
  const url = cp.api.db.url;
  const spread = await until(async () => {
    const o = await owners();
    for (const w of WORKERS) expect(countOf(o, w)).toBe(2);
    return o;
  }, 60_000);
  const epochs = async () =>
    new Map(
      (
        await sql<{ cluster: string; epoch: string }>(
          url,
          "SELECT cluster_name AS cluster, epoch FROM cluster_lease",
        )
      ).map((l) => [l.cluster, Number(l.epoch)]),
    );
  const spreadEpochs = await epochs();
  await runOnEveryCluster();

  // SIGTERM: the worker finishes its cycles and releases its leases before it exits.
  const [stopped, killed, last] = cp.children;
  const exited = new Promise((r) => stopped!.once("exit", r));
  stopped!.kill("SIGTERM");
  await exited;
  expect(await sql(url, "SELECT cluster_name FROM cluster_lease WHERE owner = 'w1'")).toEqual([]);
  await until(async () => {
    const o = await owners();
    expect(countOf(o, "w2")).toBe(3);
    expect(countOf(o, "w3")).toBe(3);
  }, 30_000);
  await runOnEveryCluster();

  // SIGKILL: the killed worker's leases stay until they lapse; then w3 owns every cluster.
  const held = [...(await owners())].filter(([, w]) => w === "w2").map(([c]) => c);
  const dead = new Promise((r) => killed!.once("exit", r));
  killed!.kill("SIGKILL");
  await dead;
  expect([...(await owners())].filter(([, w]) => w === "w2").map(([c]) => c)).toEqual(held);
  await until(async () => expect(countOf(await owners(), "w3")).toBe(6), 30_000);
  await runOnEveryCluster();
  expect(last!.exitCode).toBeNull();

  // w3's own clusters never moved; every other cluster has had a new owner (epoch) since.
  for (const [cluster, epoch] of await epochs()) {
    if (spread.get(cluster) === "w3") expect(epoch).toBe(spreadEpochs.get(cluster));
    else expect(epoch).toBeGreaterThan(spreadEpochs.get(cluster)!);
  }

  // Per cluster, no two cycles overlapped, whoever ran them.
  const byCluster = new Map<string, { worker: string; start: number; end: number }[]>();
  for (const e of [...(await cp.events("cycle.completed")), ...(await cp.events("cycle.failed"))]) {
    const i = cycleInterval(e);
    if (!i || !e.cluster) continue;
    byCluster.set(e.cluster, [...(byCluster.get(e.cluster) ?? []), i]);
  }
  for (const [cluster, list] of byCluster) {
    list.sort((a, b) => a.start - b.start);
    for (let i = 1; i < list.length; i++)
      if (list[i]!.start < list[i - 1]!.end)
        throw new Error(
          `${cluster}: a cycle of ${list[i]!.worker} began before one of ${list[i - 1]!.worker} ended`,
        );
  }
  // Every pod was bound once.
  const binds = await sql<{ n: number }>(
    url,
    "SELECT count(*)::int AS n FROM bind_request WHERE kind = 'BIND' GROUP BY pod_id",
  );
  expect(binds).toHaveLength(3 * CLUSTERS.length * 2);
  expect(binds.every((b) => b.n === 1)).toBe(true);
}, 400_000);
