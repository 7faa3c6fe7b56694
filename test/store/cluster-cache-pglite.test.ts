// The cluster cache and the full loader on the embedded database (PGlite, `npm start`): the
// change-tracking migration applies, rows come back through Prisma's raw queries, and the cached
// view after changes equals a fresh full load.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import {
  cancelJob,
  ClusterCache,
  createQueue,
  createStore,
  type Database,
  loadSnapshot,
  migrateDeploy,
  openDatabase,
  registerCluster,
  reportNodes,
  submitJob,
} from "../../src/store/index.js";
import { admin, gpuNode, job } from "./fixtures.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fleetq-cache-pglite-"));
let db: Database | undefined;
afterAll(async () => {
  await db?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

it("keeps a cluster's view on PGlite equal to a fresh full load", async () => {
  const url = `pglite:${dir}`;
  await migrateDeploy({ url });
  db = await openDatabase(url);
  const store = createStore(db);
  await createQueue(store, admin, { name: "team-a" });
  await registerCluster(store, admin, { name: "c1" });
  await reportNodes(
    store,
    { name: "agent:c1" },
    { cluster: "c1", complete: true, nodes: [gpuNode("n1", 8)] },
  );
  const first = await submitJob(store, admin, job({ name: "x", cluster: "c1" }));
  const cache = new ClusterCache(store);
  const before = await cache.refresh("c1", { now: 1 });
  expect(before.snapshot.jobs.map((j) => j.createdAt)).toEqual([first.job.createdAt.getTime()]);
  await submitJob(store, admin, job({ name: "y", cluster: "c1" }));
  await cancelJob(store, admin, { id: first.job.id });
  const after = await cache.refresh("c1", { now: 1 });
  expect(cache.lastRefresh.get("c1")).toBe("delta");
  const full = await loadSnapshot(store, "c1", { now: 1 });
  expect(after.snapshot).toEqual(full.snapshot);
  expect([...after.rows.pods.keys()].sort()).toEqual([...full.rows.pods.keys()].sort());
  expect(after.snapshot.jobs.map((j) => j.name)).toEqual(["y"]);
});
