// The workers' cluster cache against real PostgreSQL: after random sequences of API operations,
// agent reports and cycles, every cluster's cached view equals a fresh full load field by field
// (caches refreshed after every step, caches that catch up over many steps, caches whose drift
// check runs every time, the cache cycles ran from), a cycle from the cache decides exactly what
// a cycle from a full load decides, and a refresh with nothing changed says so.
import { sql } from "../helpers/db.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultSchedulerConfig, runSession, SessionCarry } from "../../src/core/index.js";
import {
  assignJobCluster,
  type CachedCluster,
  cancelJob,
  ClusterCache,
  commitSession,
  cordonCluster,
  createQueue,
  type LoadedSnapshot,
  loadSnapshot,
  registerCluster,
  reportNodes,
  setQueueQuota,
  StaleSnapshotError,
  submitJob,
  updateQueue,
} from "../../src/store/index.js";
import { reportSomeBindResults, reportSomePodPhases } from "../helpers/agent-reports.js";
import { type Prng, prng } from "../helpers/prng.js";
import { openTestStore, type TestStore } from "../helpers/store.js";
import { admin, clusterOf, gpuNode, job } from "./fixtures.js";

const CLUSTERS = ["c1", "c2"];
const NOW = 1_000_000;
let t: TestStore;

beforeAll(async () => {
  t = await openTestStore();
  await createQueue(t.store, admin, { name: "org" });
  await createQueue(t.store, admin, { name: "team-a", parent: "org" });
  await createQueue(t.store, admin, { name: "team-b", parent: "org" });
  for (const c of CLUSTERS) {
    await registerCluster(t.store, admin, { name: c });
    await reportNodes(t.store, { name: `agent:${c}` }, { cluster: c, complete: true, nodes: nodes(c, 3) });
  }
});
afterAll(async () => t?.close());

const nodes = (cluster: string, n: number, rack = 2) =>
  Array.from({ length: n }, (_, i) =>
    gpuNode(`${cluster}-n${i}`, 4, [{ key: "rack", value: `r${i % rack}` }]),
  );

/** What two loads must agree on: the snapshot, the generation and the rows (maps as sorted lists). */
const comparable = (l: LoadedSnapshot) => ({
  snapshot: l.snapshot,
  generation: l.generation,
  jobs: [...l.rows.jobs.entries()].sort(([a], [b]) => (a < b ? -1 : 1)),
  pods: [...l.rows.pods.entries()].sort(([a], [b]) => (a < b ? -1 : 1)),
});

/** Per cache and cluster, the jobs and nodes of its last session, as a worker carries them. */
const carries = new WeakMap<ClusterCache, Map<string, SessionCarry>>();

/** A cycle from `cache` (with the jobs and nodes its last session carried): its session decides exactly
 * what a session on a fresh full load decides. */

async function cycle(cache: ClusterCache, cluster: string): Promise<void> {
  const now = Date.now();
  const view = await cache.refresh(cluster, { now });
  const fresh = await loadSnapshot(t.store, cluster, { now });
  const byCluster = carries.get(cache) ?? new Map<string, SessionCarry>();
  carries.set(cache, byCluster);
  const carry = byCluster.get(cluster) ?? new SessionCarry();
  byCluster.set(cluster, carry);
  const result = runSession(view.snapshot, defaultSchedulerConfig(), { carry });
  expect(result, `a cycle on ${cluster} from the cache`).toEqual(
    runSession(fresh.snapshot, defaultSchedulerConfig()),
  );
  try {
    await commitSession(t.store, cluster, view.generation, result, view.rows);
  } catch (err) {
    if (!(err instanceof StaleSnapshotError)) throw err;
  }
}

async function randomStep(r: Prng, cache: ClusterCache, step: number): Promise<string> {
  const cluster = r.pick(CLUSTERS);
  const agent = { name: `agent:${cluster}` };
  const op = r.int(10);
  switch (op) {
    case 0:
    case 1: {
      const gpus = r.int(2);
      await submitJob(
        t.store,
        admin,
        job({
          name: `j${step}`,
          queue: r.pick(["team-a", "team-b"]),
          cluster: r.next() < 0.8 ? cluster : undefined,
          tasks: [{ name: "w", replicas: 1 + r.int(3), resources: { cpu: 500, memory: "1Gi", gpu: gpus } }],
          // Topologies come and go with the jobs that use them.
          ...(r.next() < 0.3 ? { topology: { preferred: r.pick(["rack", "zone"]) } } : {}),
        }),
      );
      return "submit";
    }
    case 2: {
      const waiting = await sql<{ id: string }>(
        t.testDb.url,
        "SELECT id::text FROM job WHERE cluster_name IS NULL AND state = 'PENDING' ORDER BY id",
      );
      if (waiting.length) await assignJobCluster(t.store, admin, { job: r.pick(waiting).id, cluster });
      return "assign";
    }
    case 3: {
      const open = await sql<{ id: string }>(
        t.testDb.url,
        "SELECT id::text FROM job WHERE state IN ('PENDING', 'ADMITTED', 'RUNNING') ORDER BY id",
      );
      if (open.length) await cancelJob(t.store, admin, { id: r.pick(open).id });
      return "cancel";
    }
    case 4:
      await setQueueQuota(t.store, admin, {
        queue: r.pick(["team-a", "team-b"]),
        cluster: r.next() < 0.5 ? cluster : undefined,
        resource: "GPU",
        deserved: r.int(8),
      });
      await updateQueue(t.store, admin, { name: r.pick(["team-a", "team-b"]), priority: 50 + r.int(100) });
      return "quota";
    case 5: {
      const c = await clusterOf(t, cluster);
      await cordonCluster(t.store, admin, { name: cluster, cordoned: !c.cordoned && r.next() < 0.5 });
      return "cordon";
    }
    case 6:
      await reportNodes(t.store, agent, {
        cluster,
        complete: true,
        nodes: nodes(cluster, 2 + r.int(3), 1 + r.int(2)),
      });
      return "nodes";
    case 7:
      await reportSomeBindResults(t, agent, cluster, r, { share: 0.7, ok: 0.8 });
      return "bind results";
    case 8:
      await reportSomePodPhases(t, agent, cluster, r, 0.5, (state) =>
        state === "BINDING" ? "RUNNING" : r.pick(["SUCCEEDED", "FAILED"] as const),
      );
      return "pod phases";
    default:
      await cycle(cache, cluster);
      return "cycle";
  }
}

describe("ClusterCache", () => {
  it.each([
    1, 2, 3,
  ])("equals a fresh full load after every step of a random sequence (seed %i)", async (seed) => {
    const r = prng(seed);
    const eager = new ClusterCache(t.store);
    const lazy = new ClusterCache(t.store);
    const checked = new ClusterCache(t.store, { driftCheckEvery: 1 });
    const worker = new ClusterCache(t.store);
    for (let step = 0; step < 40; step++) {
      const op = await randomStep(r, worker, seed * 1000 + step);
      // The worker's cache too: its specs went through sessions, which must not have changed them.
      const caches = step % 7 === 6 ? [eager, lazy, checked, worker] : [eager, checked];
      for (const cluster of CLUSTERS) {
        const fresh = comparable(await loadSnapshot(t.store, cluster, { now: NOW }));
        for (const cache of caches) {
          const view: CachedCluster = await cache.refresh(cluster, { now: NOW });
          expect(comparable(view), `after step ${step} (${op}) on ${cluster}`).toEqual(fresh);
        }
      }
    }
    // Caches that kept up read deltas, not full loads.
    expect(eager.fullLoads).toBe(CLUSTERS.length);
    expect(checked.fullLoads).toBe(CLUSTERS.length);
  });

  it.each([
    4, 5, 6,
  ])("tells in one read which clusters did not change, never one that did (seed %i)", async (seed) => {
    const r = prng(seed);
    const told = new ClusterCache(t.store);
    const worker = new ClusterCache(t.store);
    /** Per cluster, the told cache's last view (what it holds while it says unchanged). */
    const last = new Map<string, ReturnType<typeof comparable>>();
    for (const cluster of CLUSTERS) last.set(cluster, comparable(await told.refresh(cluster, { now: NOW })));
    let skipped = 0;
    for (let step = 0; step < 40; step++) {
      const op = await randomStep(r, worker, seed * 1000 + step);
      const same = await told.unchangedSinceRefresh(CLUSTERS);
      for (const cluster of CLUSTERS) {
        const fresh = comparable(await loadSnapshot(t.store, cluster, { now: NOW }));
        if (same.has(cluster)) skipped++;
        else last.set(cluster, comparable(await told.refresh(cluster, { now: NOW })));
        const said = same.has(cluster) ? "said unchanged" : "refreshed";
        expect(last.get(cluster), `after step ${step} (${op}), ${cluster} ${said}`).toEqual(fresh);
      }
    }
    expect(skipped).toBeGreaterThan(5);
    expect(told.fullLoads).toBe(CLUSTERS.length);
  });

  it("tells a cluster unchanged until one of its rows, a queue or a quota changes", async () => {
    const cache = new ClusterCache(t.store);
    const refreshed = async () => {
      for (const c of CLUSTERS) await cache.refresh(c, { now: NOW });
    };
    /** Refreshed: both unchanged (transactions still open elsewhere on the server or not). */
    const settled = async () => {
      await refreshed();
      expect([...(await cache.unchangedSinceRefresh(CLUSTERS))].sort()).toEqual(CLUSTERS);
    };
    await settled();
    await submitJob(t.store, admin, job({ name: "told", cluster: "c1" }));
    expect(await cache.unchangedSinceRefresh(CLUSTERS)).not.toContain("c1");
    expect((await cache.refresh("c1", { now: NOW })).unchanged).toBe(false);
    await settled();
    await setQueueQuota(t.store, admin, { queue: "team-b", cluster: "c2", resource: "GPU", deserved: 11 });
    expect(await cache.unchangedSinceRefresh(CLUSTERS)).not.toContain("c2");
    expect((await cache.refresh("c2", { now: NOW })).unchanged).toBe(false);
    await settled();
    const { cordoned } = await clusterOf(t, "c2");
    await cordonCluster(t.store, admin, { name: "c2", cordoned: !cordoned });
    expect(await cache.unchangedSinceRefresh(CLUSTERS)).not.toContain("c2");
    await cordonCluster(t.store, admin, { name: "c2", cordoned });
    expect(cache.lastRefresh.get("c1")).toBe("delta");
  });

  it("says unchanged when nothing was written since its last refresh, and not otherwise", async () => {
    const cache = new ClusterCache(t.store);
    expect((await cache.refresh("c1", { now: NOW })).unchanged).toBe(false);
    expect((await cache.refresh("c1", { now: NOW })).unchanged).toBe(true);
    await updateQueue(t.store, admin, { name: "team-a", priority: 77 });
    expect((await cache.refresh("c1", { now: NOW })).unchanged).toBe(false);
    expect((await cache.refresh("c1", { now: NOW })).unchanged).toBe(true);
    await submitJob(t.store, admin, job({ name: "late", cluster: "c1" }));
    expect((await cache.refresh("c1", { now: NOW })).unchanged).toBe(false);
    expect(cache.lastRefresh.get("c1")).toBe("delta");
    expect((await cache.refresh("c2", { now: NOW })).unchanged).toBe(false);
    expect((await cache.refresh("c2", { now: NOW })).unchanged).toBe(true);
  });

  it("holds a view's rows while it is in use: a refresh of the cluster waits until the use settles", async () => {
    const cache = new ClusterCache(t.store);
    let refreshed: Promise<CachedCluster> | undefined;
    const pods = await cache.use("c1", { now: NOW }, async (view) => {
      const held = view.rows.jobs.size;
      // Another reader's refresh, asked for while the view is planned and committed from.
      refreshed = cache.refresh("c1", { now: NOW });
      await submitJob(t.store, admin, job({ name: "meanwhile", cluster: "c1" }));
      await new Promise((r) => setTimeout(r, 50));
      expect(view.rows.jobs.size, "the rows of a view in use").toBe(held);
      return held;
    });
    const after = await refreshed!;
    expect(after.unchanged).toBe(false);
    expect(after.rows.jobs.size).toBe(pods + 1);
  });
});
