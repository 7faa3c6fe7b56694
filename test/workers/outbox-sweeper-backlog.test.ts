// The outbox sweeper behind a large backlog, on a Redis server of its own (its command counts are
// read): looking up a request's job is one hash read, never a scan of the waiting list, and a
// request carried out while the sweep looked (its result reported, its job gone) is not sent
// again; one truly lost is.
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type LocalRedis, localRedis } from "../../src/cli/dev/local-redis.js";
import { bindQueueName } from "../../src/protocol/bind-request.js";
import { bindRequestsToDispatch } from "../../src/store/operations/dispatch.js";
import { reportBindResult } from "../../src/store/operations/report-pods.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { BindDispatcher } from "../../workers/dispatch/bind-dispatcher.js";
import { sweepRows } from "../../workers/dispatch/sweep-outbox.js";
import { runCycle } from "../helpers/cycle.js";
import type { TestStore } from "../helpers/store.js";
import { admin, job, storeWithC1 } from "../store/fixtures.js";
import { tempDir } from "../helpers/temp-dir.js";

const BACKLOG = 20_000;

let t: TestStore;
const stateDir = tempDir("fleetq-sweeper");
let server: LocalRedis;
let redis: Redis;
let dispatcher: BindDispatcher;
let queue: Queue;
const prefix = "bind";

beforeAll(async () => {
  server = await localRedis({
    env: { PATH: process.env.PATH },
    stateDir,
    probeUrl: "redis://127.0.0.1:1",
  });
  t = await storeWithC1();
  redis = new Redis(server.url, { maxRetriesPerRequest: null });
  dispatcher = new BindDispatcher(t.store, redis, prefix);
  queue = new Queue(bindQueueName("c1"), { connection: redis, prefix });
});
afterAll(async () => {
  await queue?.close();
  await dispatcher?.close();
  redis?.disconnect();
  await server?.stop();
  await t?.close();
});

/** Calls per command since the last reset, from INFO commandstats. */
async function commandCalls(): Promise<Record<string, number>> {
  const info = await redis.info("commandstats");
  const calls: Record<string, number> = {};
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[m[1]!] = Number(m[2]);
  return calls;
}

it("looks each request up in O(1) behind a backlog, and resends only what is truly lost", async () => {
  await submitJob(t.store, admin, job({ name: "a", cluster: "c1" }));
  await submitJob(t.store, admin, job({ name: "b", cluster: "c1" }));
  const { bindRequests } = await runCycle(t.store, "c1");
  expect(bindRequests).toHaveLength(4);
  expect(await dispatcher.send(bindRequests, "cycle")).toBe(4);
  for (let i = 0; i < BACKLOG; i += 5000) {
    await queue.addBulk(
      Array.from({ length: 5000 }, (_, k) => ({
        name: "bind",
        data: { n: i + k },
        opts: { jobId: `x${i + k}` },
      })),
    );
  }
  expect(await queue.getWaitingCount()).toBe(BACKLOG + 4);

  // The sweep reads its rows …
  const rows = await bindRequestsToDispatch(t.store, {
    pendingOlderThanMs: 0,
    redispatchAfterMs: 0,
    now: new Date(Date.now() + 1000),
  });
  expect(rows.map((r) => r.state)).toEqual(Array(4).fill("DISPATCHED"));
  const [done, lost] = bindRequests;
  // … meanwhile the agent carries one out (result reported, then its job removed) and one job
  // is lost from Redis without a result.
  await reportBindResult(
    t.store,
    { name: "agent:c1" },
    { cluster: "c1", results: [{ bindRequest: done!.id, ok: true }] },
  );
  await queue.remove(done!.id);
  await queue.remove(lost!.id);

  await redis.config("RESETSTAT");
  const states = await dispatcher.queueStates(rows);
  expect(bindRequests.map((b) => states.get(b.id))).toEqual(["missing", "missing", "queued", "queued"]);
  // One hash read per request; nothing that walks a list or runs a script.
  expect(await commandCalls()).toEqual({ hmget: 4, "config|resetstat": 1 });

  expect(await sweepRows(t.store, dispatcher, rows)).toEqual({ sent: 0, resent: 1, stillQueued: 2 });
  expect(await queue.getJob(done!.id)).toBeUndefined();
  expect(((await queue.getJob(lost!.id))!.data as { attempt: number }).attempt).toBe(2);
  expect(await queue.getWaitingCount()).toBe(BACKLOG + 3);
});
