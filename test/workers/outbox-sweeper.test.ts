// The outbox sweeper against real PostgreSQL and Redis (no agent consuming the bind queue, so
// what is queued stays queued): committed-but-unsent rows are sent, rows whose job still waits on
// the queue are left alone, rows whose job is gone are sent again — never two jobs for one row.
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { bindQueueName } from "../../src/protocol/bind-request.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { BindDispatcher } from "../../workers/dispatch/bind-dispatcher.js";
import { sweepOutbox } from "../../workers/index.js";
import { runCycle } from "../helpers/cycle.js";
import { TEST_REDIS_URL, testRedisPrefix } from "../helpers/redis.js";
import { bindRequestsOfCluster, MAX_BIND_REQUESTS_PAGE } from "../../src/store/index.js";
import type { TestStore } from "../helpers/store.js";
import { admin, job, storeWithC1 } from "../store/fixtures.js";

let t: TestStore;
let redis: Redis;
let dispatcher: BindDispatcher;
let queue: Queue;
const prefix = `${testRedisPrefix("fleetq-sweeper")}bind`;

beforeAll(async () => {
  t = await storeWithC1();
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  dispatcher = new BindDispatcher(t.store, redis, prefix);
  queue = new Queue(bindQueueName("c1"), { connection: redis, prefix });
});
afterAll(async () => {
  await queue?.obliterate({ force: true });
  await queue?.close();
  await dispatcher?.close();
  redis?.disconnect();
  await t?.close();
});

/** A sweep a second from now: every row is older than a zero delay, whatever the clock's grain. */
const later = () => new Date(Date.now() + 1000);

const rows = async () =>
  (await bindRequestsOfCluster(t.store, "c1", null, MAX_BIND_REQUESTS_PAGE)).sort((a, b) =>
    a.id < b.id ? -1 : 1,
  );
/** The row of each of these requests, in their order. */
const rowsOf = async (ids: readonly { id: string }[]) => {
  const byId = new Map((await rows()).map((r) => [r.id, r]));
  return ids.map((r) => byId.get(r.id)!);
};

it("sends what a cycle committed but never sent, then only what left the queue", async () => {
  await submitJob(t.store, admin, job({ cluster: "c1" }));
  const committed = await runCycle(t.store, "c1"); // commits, sends nothing: a worker died here
  expect(committed.bindRequests).toHaveLength(2);
  expect((await rows()).map((r) => r.state)).toEqual(["PENDING", "PENDING"]);

  // Younger than the grace: left to the cycle that is (maybe) still sending them.
  expect(
    await sweepOutbox(t.store, dispatcher, { pendingGraceMs: 60_000, redispatchAfterMs: 60_000 }),
  ).toEqual({
    sent: 0,
    resent: 0,
    stillQueued: 0,
  });
  expect(
    await sweepOutbox(t.store, dispatcher, { pendingGraceMs: 0, redispatchAfterMs: 60_000, now: later() }),
  ).toEqual({
    sent: 2,
    resent: 0,
    stillQueued: 0,
  });
  expect((await rows()).map((r) => [r.state, r.attempts])).toEqual([
    ["DISPATCHED", 1],
    ["DISPATCHED", 1],
  ]);
  expect(await queue.getWaitingCount()).toBe(2);
  const first = (await queue.getJob(committed.bindRequests[0]!.id))!.data as {
    id: string;
    kind: string;
    attempt: number;
  };
  expect(first).toMatchObject({ id: committed.bindRequests[0]!.id, kind: "bind", attempt: 1 });

  // Past the redispatch delay: still waiting on the queue, so nothing is sent again.
  expect(
    await sweepOutbox(t.store, dispatcher, { pendingGraceMs: 0, redispatchAfterMs: 0, now: later() }),
  ).toEqual({
    sent: 0,
    resent: 0,
    stillQueued: 2,
  });
  expect(await queue.getWaitingCount()).toBe(2);

  // One job is lost from Redis: that row alone is sent again, as a fresh job with the same id.
  await queue.remove(committed.bindRequests[1]!.id);
  expect(
    await sweepOutbox(t.store, dispatcher, { pendingGraceMs: 0, redispatchAfterMs: 0, now: later() }),
  ).toEqual({
    sent: 0,
    resent: 1,
    stillQueued: 1,
  });
  expect(await queue.getWaitingCount()).toBe(2);
  expect((await rowsOf(committed.bindRequests)).map((r) => r.attempts)).toEqual([1, 2]);
  const again = (await queue.getJob(committed.bindRequests[1]!.id))!.data as { attempt: number };
  expect(again.attempt).toBe(2);

  // Sending rows whose jobs are still queued (a crash between addBulk and the mark) adds nothing.
  await dispatcher.send(committed.bindRequests, "cycle");
  expect(await queue.getWaitingCount()).toBe(2);
});
