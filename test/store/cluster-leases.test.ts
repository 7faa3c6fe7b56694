// Cluster ownership in PostgreSQL: leases taken by one worker at a time, renewed, lapsing on the
// database's clock, released; and the fence — a commit carrying a lease that is no longer current
// (lapsed, or taken over) is refused whole, while the current owner's commit goes through.
import { afterAll, beforeAll, expect, it } from "vitest";
import { runSession } from "../../src/core/index.js";
import { LeaseLostError } from "../../src/store/errors.js";
import {
  acquireClusterLeases,
  clusterOwners,
  leaveWorkers,
  ownershipView,
  releaseClusterLeases,
  renewWorkerLeases,
} from "../../src/store/operations/cluster-leases.js";
import { registerCluster } from "../../src/store/operations/clusters.js";
import { commitSession } from "../../src/store/operations/commit-session.js";
import { createQueue } from "../../src/store/operations/queues.js";
import { reportNodes } from "../../src/store/operations/report-nodes.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { loadSnapshot } from "../../src/store/snapshot/load-snapshot.js";
import { openTestStore, type TestStore } from "../helpers/store.js";
import { admin, bindRequestsOf, clusterOf, gpuNode, job } from "./fixtures.js";

let t: TestStore;

beforeAll(async () => {
  t = await openTestStore();
  await createQueue(t.store, admin, { name: "team-a" });
  for (const c of ["c1", "c2", "c3"]) await registerCluster(t.store, admin, { name: c });
  await reportNodes(
    t.store,
    { name: "agent:c1" },
    { cluster: "c1", complete: true, nodes: [gpuNode("n1", 8)] },
  );
});
afterAll(async () => t?.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it("gives each cluster to one worker at a time, renews, lapses and releases", async () => {
  await renewWorkerLeases(t.store, "w1", 60_000);
  await renewWorkerLeases(t.store, "w2", 60_000);
  // Both reach for c1 and c2 at once: each cluster goes to exactly one of them.
  const [a, b] = await Promise.all([
    acquireClusterLeases(t.store, "w1", ["c1", "c2"], 60_000),
    acquireClusterLeases(t.store, "w2", ["c1", "c2"], 60_000),
  ]);
  expect([...a, ...b].map((l) => l.cluster).sort()).toEqual(["c1", "c2"]);
  const view = await ownershipView(t.store);
  expect(view.workers).toEqual(["w1", "w2"]);
  expect(view.clusters.find((c) => c.name === "c3")?.owner).toBeNull();
  // A held cluster is not taken; a renewal returns what the worker holds.
  expect(
    await acquireClusterLeases(
      t.store,
      "w2",
      a.map((l) => l.cluster),
      60_000,
    ),
  ).toEqual([]);
  expect((await renewWorkerLeases(t.store, "w1", 60_000)).map((l) => l.cluster).sort()).toEqual(
    a.map((l) => l.cluster).sort(),
  );
  // Released: free at once, with a new epoch for whoever takes it.
  const released = a.map((l) => l.cluster);
  expect(await releaseClusterLeases(t.store, "w1", released)).toEqual(released);
  const taken = await acquireClusterLeases(t.store, "w2", released, 60_000);
  expect(taken.map((l) => [l.cluster, l.epoch])).toEqual(a.map((l) => [l.cluster, l.epoch + 1]));
  expect([...(await clusterOwners(t.store)).values()].map((o) => o.owner)).toEqual(["w2", "w2"]);
  // A lease not renewed lapses: the next worker takes it, and the old owner's renewal no longer
  // returns it.
  await acquireClusterLeases(t.store, "w1", ["c3"], 200);
  await sleep(300);
  expect((await renewWorkerLeases(t.store, "w1", 60_000)).map((l) => l.cluster)).toEqual([]);
  expect((await acquireClusterLeases(t.store, "w2", ["c3"], 60_000)).map((l) => l.cluster)).toEqual(["c3"]);
  await leaveWorkers(t.store, "w2");
  expect((await ownershipView(t.store)).workers).toEqual(["w1"]);
  expect((await clusterOwners(t.store)).size).toBe(0);
  await leaveWorkers(t.store, "w1");
});

it("refuses the commit of a worker whose lease lapsed or was taken over, and takes the owner's", async () => {
  const { job: j } = await submitJob(t.store, admin, job({ name: "a", cluster: "c1" }));
  const [mine] = await acquireClusterLeases(t.store, "old", ["c1"], 200);
  const loaded = await loadSnapshot(t.store, "c1");
  const result = runSession(loaded.snapshot);
  expect(result.binds.length).toBeGreaterThan(0);
  await sleep(300);
  // Lapsed, nobody took it yet: refused all the same.
  const commit = (lease: { owner: string; epoch: number }) =>
    commitSession(t.store, "c1", loaded.generation, result, loaded.rows, { lease });
  await expect(commit({ owner: "old", epoch: mine!.epoch })).rejects.toBeInstanceOf(LeaseLostError);
  // Taken over: the former owner's commit is refused and names the new owner.
  const [theirs] = await acquireClusterLeases(t.store, "new", ["c1"], 60_000);
  await expect(commit({ owner: "old", epoch: mine!.epoch })).rejects.toThrow(/now "new" at epoch/);
  const generation = Number((await clusterOf(t, "c1")).generation);
  expect(generation).toBe(loaded.generation);
  expect(await bindRequestsOf(t, j.id)).toEqual([]);
  // The owner's commit of the same result goes through.
  const done = await commit({ owner: "new", epoch: theirs!.epoch });
  expect(done.bindRequests.length).toBe(result.binds.length);
});
