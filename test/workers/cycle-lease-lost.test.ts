// A cycle whose cluster moved to another worker while it ran: its commit is refused by the lease,
// and the cycle is dropped — counted as such, not as a failure, and with no cycle event (its
// interval would overlap the new owner's cycles, which are the cluster's record).
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  acquireClusterLeases,
  createQueue,
  registerCluster,
  reportNodes,
  submitJob,
} from "../../src/store/index.js";
import { BindDispatcher } from "../../workers/dispatch/bind-dispatcher.js";
import { runCycle } from "../../workers/index.js";
import { cyclesTotal, taskErrorsTotal } from "../../workers/metrics.js";
import { testCycleDeps } from "../helpers/cycle-deps.js";
import { deleteTestKeys, TEST_REDIS_URL, testRedisPrefix } from "../helpers/redis.js";
import { countRows } from "../helpers/db.js";
import { openTestStore, type TestStore } from "../helpers/store.js";
import { admin, gpuNode, job } from "../store/fixtures.js";

let t: TestStore;
let redis: Redis;
let dispatcher: BindDispatcher;
const prefix = testRedisPrefix("fleetq-lease-lost");

beforeAll(async () => {
  t = await openTestStore();
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  dispatcher = new BindDispatcher(t.store, redis, `${prefix}bind`);
  await createQueue(t.store, admin, { name: "team-a" });
  await registerCluster(t.store, admin, { name: "c1" });
  await reportNodes(
    t.store,
    { name: "agent:c1" },
    { cluster: "c1", complete: true, nodes: [gpuNode("n1", 8)] },
  );
});
afterAll(async () => {
  await dispatcher?.close();
  await deleteTestKeys(prefix, redis);
  redis?.disconnect();
  await t?.close();
});

type Counter = { get(): Promise<{ values: { labels: Record<string, unknown>; value: number }[] }> };
const count = async (metric: Counter, labels: Record<string, string>) =>
  (await metric.get()).values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))
    ?.value ?? 0;

it("drops a cycle whose lease was taken over: nothing committed, no failure, no event", async () => {
  const { job: j } = await submitJob(t.store, admin, job({ name: "a", cluster: "c1" }));
  const [mine] = await acquireClusterLeases(t.store, "old", ["c1"], 200);
  await new Promise((r) => setTimeout(r, 300));
  await acquireClusterLeases(t.store, "new", ["c1"], 60_000);
  const failedBefore = await count(taskErrorsTotal, { task: "cycle" });
  const lostBefore = await count(cyclesTotal, { cluster: "c1", outcome: "lease_lost" });

  // The old owner still believes it holds the lease it had.
  const deps = testCycleDeps(
    { store: t.store, dispatcher, redis, prefix },
    { workerId: "old", lease: () => ({ owner: "old", epoch: mine!.epoch }) },
  );
  const report = await runCycle(deps, "c1", "test");
  expect(report.leaseLost).toBe(true);
  expect(report.error).toBeNull();
  expect(report.binds).toBe(0);
  expect(await count(taskErrorsTotal, { task: "cycle" })).toBe(failedBefore);
  expect(await count(cyclesTotal, { cluster: "c1", outcome: "lease_lost" })).toBe(lostBefore + 1);
  expect(await countRows(t.testDb.url, "bind_request", "job_id = $1", [j.id])).toBe(0);
  expect(await countRows(t.testDb.url, "event", "kind IN ('cycle.completed', 'cycle.failed')")).toBe(0);
});
