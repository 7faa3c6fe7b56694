// When a cycle skips its snapshot, against real PostgreSQL and Redis: a timer's cycle on a quiet
// cluster whose generation has not moved, and a cycle asked for by reports that moved nothing;
// never one with a pod waiting (a job submitted whose event was missed is still placed).
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { defaultSchedulerConfig } from "../../src/core/index.js";
import { registerCluster } from "../../src/store/operations/clusters.js";
import { createQueue } from "../../src/store/operations/queues.js";
import { reportNodes } from "../../src/store/operations/report-nodes.js";
import { reportPodStatus } from "../../src/store/operations/report-pods.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import type { CycleDeps } from "../../workers/cycle/run-cycle.js";
import { SearchCursorStore } from "../../workers/cycle/search-cursor-store.js";
import { BindDispatcher } from "../../workers/dispatch/bind-dispatcher.js";
import { runCycle } from "../../workers/index.js";
import { REPORT_TRIGGER } from "../../workers/triggers.js";
import { TEST_REDIS_URL, testRedisPrefix } from "../helpers/redis.js";
import { openTestStore, type TestStore } from "../helpers/store.js";
import { admin, gpuNode, job } from "../store/fixtures.js";

let t: TestStore;
let redis: Redis;
let deps: CycleDeps;
const prefix = testRedisPrefix("fleetq-skip");

beforeAll(async () => {
  t = await openTestStore();
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  deps = {
    store: t.store,
    config: defaultSchedulerConfig(),
    dispatcher: new BindDispatcher(t.store, redis, `${prefix}bind`),
    usageWindow: null,
    backoff: { baseMs: 1000, maxMs: 1000 },
    staleRetries: 3,
    logIdleCycles: false,
    workerId: "test",
    log: pino({ level: "silent" }),
    memory: new Map(),
    searchCursors: new SearchCursorStore(redis, prefix, pino({ level: "silent" })),
  };
  await createQueue(t.store, admin, { name: "team-a" });
  await registerCluster(t.store, admin, { name: "c1" });
  await reportNodes(
    t.store,
    { name: "agent:c1" },
    { cluster: "c1", complete: true, nodes: [gpuNode("n1", 8)] },
  );
});
afterAll(async () => {
  await deps?.dispatcher.close();
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  redis?.disconnect();
  await t?.close();
});

it("skips only when nothing can have changed", async () => {
  const first = await submitJob(t.store, admin, job({ cluster: "c1" }));
  // Never seen by this process: a full cycle, which places the job.
  expect(await runCycle(deps, "c1", "timer")).toMatchObject({ skipped: false, binds: 2 });
  const pods = await t.db.prisma.pod.findMany({ where: { jobId: first.job.id } });
  await reportPodStatus(
    t.store,
    { name: "agent:c1" },
    {
      cluster: "c1",
      updates: pods.map((p) => ({ job: first.job.id, pod: p.name, state: "RUNNING" as const })),
    },
  );
  // The confirmations did not move the generation since this process's commit: nothing to do.
  expect((await runCycle(deps, "c1", REPORT_TRIGGER)).skipped).toBe(true);
  // The last cycle committed, so the timer's runs (and finds the cluster quiet).
  expect(await runCycle(deps, "c1", "timer")).toMatchObject({ skipped: false, binds: 0 });
  // Quiet: a timer's cycle and a report's are skipped; a cycle for new work is not.
  expect((await runCycle(deps, "c1", "timer")).skipped).toBe(true);
  expect((await runCycle(deps, "c1", REPORT_TRIGGER)).skipped).toBe(true);
  expect((await runCycle(deps, "c1", "event")).skipped).toBe(false);

  // A job arrives and its event is missed: the timer's cycle sees the waiting pods and runs.
  await submitJob(t.store, admin, job({ name: "second", cluster: "c1" }));
  expect(await runCycle(deps, "c1", "timer")).toMatchObject({ skipped: false, binds: 2 });

  // A pod ends: the generation moves, the report's cycle runs.
  await reportPodStatus(
    t.store,
    { name: "agent:c1" },
    {
      cluster: "c1",
      updates: [{ job: first.job.id, pod: pods[0]!.name, state: "SUCCEEDED" as const }],
    },
  );
  expect((await runCycle(deps, "c1", REPORT_TRIGGER)).skipped).toBe(false);
});
