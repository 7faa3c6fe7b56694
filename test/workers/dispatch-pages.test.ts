// Sending a cycle's BindRequests a page at a time, pages overlapping (the next page read and the
// last one marked while a page goes onto the queue): more than two pages' worth all reach the
// cluster's bind queue, each once, and every row is marked DISPATCHED.
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { bindQueueName } from "../../src/protocol/bind-request.js";
import { registerCluster } from "../../src/store/operations/clusters.js";
import { createQueue } from "../../src/store/operations/queues.js";
import { reportNodes } from "../../src/store/operations/report-nodes.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { BindDispatcher } from "../../workers/dispatch/bind-dispatcher.js";
import { runCycle } from "../helpers/cycle.js";
import { TEST_REDIS_URL, deleteTestKeys, testRedisPrefix } from "../helpers/redis.js";
import { sql } from "../helpers/db.js";
import { openTestStore, type TestStore } from "../helpers/store.js";
import { admin, gpuNode, job } from "../store/fixtures.js";

const JOBS = 50;
const PODS_PER_JOB = 50;

let t: TestStore;
let redis: Redis;
let dispatcher: BindDispatcher;
let queue: Queue;
const prefix = testRedisPrefix("fleetq-dispatch-pages");

beforeAll(async () => {
  t = await openTestStore();
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  dispatcher = new BindDispatcher(t.store, redis, `${prefix}bind`);
  queue = new Queue(bindQueueName("c1"), { connection: redis, prefix: `${prefix}bind` });
  await createQueue(t.store, admin, { name: "team-a" });
  await registerCluster(t.store, admin, { name: "c1" });
  await reportNodes(
    t.store,
    { name: "agent:c1" },
    { cluster: "c1", complete: true, nodes: Array.from({ length: 40 }, (_, i) => gpuNode(`n${i}`, 8)) },
  );
});
afterAll(async () => {
  await queue?.close();
  await dispatcher?.close();
  await deleteTestKeys(prefix, redis);
  redis?.disconnect();
  await t?.close();
});

it("sends every BindRequest of a cycle over several pages, each once, and marks them all", async () => {
  for (let i = 0; i < JOBS; i++)
    await submitJob(
      t.store,
      admin,
      job({
        name: `j${i}`,
        cluster: "c1",
        tasks: [{ name: "w", replicas: PODS_PER_JOB, resources: { cpu: 100, memory: "64Mi" } }],
      }),
    );
  const { bindRequests } = await runCycle(t.store, "c1");
  expect(bindRequests).toHaveLength(JOBS * PODS_PER_JOB);
  expect(await dispatcher.send(bindRequests, "cycle")).toBe(JOBS * PODS_PER_JOB);
  expect(await queue.getWaitingCount()).toBe(JOBS * PODS_PER_JOB);
  // Pages overlap on their way to Redis, and still land in the order of the requests.
  const waiting = await queue.getJobs(["waiting"], 0, -1, true);
  expect(waiting.map((j) => j.id)).toEqual(bindRequests.map((b) => b.id));
  const states = await dispatcher.queueStates(bindRequests);
  expect(bindRequests.every((b) => states.get(b.id) === "queued")).toBe(true);
  const rows = await sql(
    t.testDb.url,
    "SELECT state::text, count(*)::int AS n FROM bind_request GROUP BY state",
  );
  expect(rows).toEqual([{ state: "DISPATCHED", n: JOBS * PODS_PER_JOB }]);
  // Sending them again puts nothing new on the queue (the job id is the row id).
  await dispatcher.send(bindRequests, "cycle");
  expect(await queue.getWaitingCount()).toBe(JOBS * PODS_PER_JOB);
});
