// Two worker processes' caches taking turns at one cluster's cycles (as BullMQ hands the runs to
// either), against real PostgreSQL and Redis: each catches up on what the other committed, and
// none ever commits from a stale view — a node never holds more than it has, a pod is never
// placed twice, and a cycle that found its view stale refreshed and retried.
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { testCycleDeps } from "../helpers/cycle-deps.js";
import {
  createQueue,
  registerCluster,
  reportBindResult,
  reportNodes,
  reportPodStatus,
  submitJob,
} from "../../src/store/index.js";
import type { CycleDeps } from "../../workers/cycle/run-cycle.js";
import { BindDispatcher } from "../../workers/dispatch/bind-dispatcher.js";
import { runCycle } from "../../workers/index.js";
import { prng } from "../helpers/prng.js";
import { TEST_REDIS_URL, deleteTestKeys, testRedisPrefix } from "../helpers/redis.js";
import { sql } from "../helpers/db.js";
import { openTestStore, type TestStore } from "../helpers/store.js";
import { admin, gpuNode, job } from "../store/fixtures.js";

let t: TestStore;
let redis: Redis;
let dispatcher: BindDispatcher;
const prefix = testRedisPrefix("fleetq-two-caches");
const agent = { name: "agent:c1" };

beforeAll(async () => {
  t = await openTestStore();
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  dispatcher = new BindDispatcher(t.store, redis, `${prefix}bind`);
  await createQueue(t.store, admin, { name: "team-a" });
  await registerCluster(t.store, admin, { name: "c1" });
  await reportNodes(t.store, agent, {
    cluster: "c1",
    complete: true,
    nodes: [gpuNode("n1", 4), gpuNode("n2", 4)],
  });
});
afterAll(async () => {
  await dispatcher?.close();
  await deleteTestKeys(prefix, redis);
  redis?.disconnect();
  await t?.close();
});

const worker = (id: string): CycleDeps =>
  testCycleDeps(
    { store: t.store, dispatcher, redis, prefix },
    { backoff: { baseMs: 1, maxMs: 1 }, staleRetries: 5, workerId: id },
  );

/** GPUs held per node (pods BINDING, RUNNING or RELEASING there) never exceed the node's 4, and
 * no pod has two BIND requests waiting. */
async function checkNothingOvercommitted(step: number): Promise<void> {
  const held = await sql<{ node: string; gpus: number }>(
    t.testDb.url,
    `SELECT node_name AS node, sum(gpus)::int AS gpus FROM pod
     WHERE state IN ('BINDING', 'RUNNING', 'RELEASING') GROUP BY node_name`,
  );
  for (const h of held) expect(h.gpus, `step ${step}: GPUs held on ${h.node}`).toBeLessThanOrEqual(4);
  const twice = await sql<{ n: number }>(
    t.testDb.url,
    `SELECT count(*)::int AS n FROM (SELECT pod_id FROM bind_request WHERE kind = 'BIND'
       AND state IN ('PENDING', 'DISPATCHED') GROUP BY pod_id HAVING count(*) > 1) x`,
  );
  expect(twice[0]!.n, `step ${step}: pods with two binds waiting`).toBe(0);
}

it("never commits from a stale cache when two workers take turns", async () => {
  const workers = [worker("w1"), worker("w2")];
  const r = prng(7);
  let stale = 0;
  for (let step = 0; step < 50; step++) {
    const op = r.int(4);
    if (op === 0)
      await submitJob(
        t.store,
        admin,
        job({
          name: `j${step}`,
          queue: "team-a",
          cluster: "c1",
          tasks: [
            { name: "w", replicas: 1 + r.int(2), resources: { cpu: 500, memory: "1Gi", gpu: 1 + r.int(2) } },
          ],
        }),
      );
    if (op === 1) {
      const requests = await sql<{ id: string }>(
        t.testDb.url,
        "SELECT id::text FROM bind_request WHERE state IN ('PENDING', 'DISPATCHED') ORDER BY id",
      );
      if (requests.length)
        await reportBindResult(t.store, agent, {
          cluster: "c1",
          results: requests.map((b) => ({ bindRequest: b.id, ok: r.next() < 0.9 })),
        });
    }
    if (op === 2) {
      const pods = await sql<{ jobId: string; name: string; state: string }>(
        t.testDb.url,
        `SELECT job_id::text AS "jobId", name, state::text FROM pod WHERE state IN ('RUNNING', 'BINDING') ORDER BY id`,
      );
      const some = pods.filter(() => r.next() < 0.5);
      if (some.length)
        await reportPodStatus(t.store, agent, {
          cluster: "c1",
          updates: some.map((p) => ({
            job: p.jobId,
            pod: p.name,
            state: p.state === "BINDING" ? ("RUNNING" as const) : ("SUCCEEDED" as const),
          })),
        });
    }
    // Both workers start a cycle at once now and then: one of them commits on a stale view.
    const turn = r.next() < 0.3 ? workers : [workers[step % 2]!];
    const reports = await Promise.all(turn.map((w) => runCycle(w, "c1", "timer")));
    for (const report of reports) {
      expect(report.error, `step ${step}`).toBeNull();
      stale += report.staleRetries;
    }
    await checkNothingOvercommitted(step);
  }
  expect(stale).toBeGreaterThan(0);
});
