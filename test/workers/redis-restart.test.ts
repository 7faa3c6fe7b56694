// A Redis that restarts empty loses every queue's timer and concurrency limit along with the
// queued jobs; one that loses only its last writes can keep a timer whose next run is gone. The
// serial tasks (the outbox sweeper, admission, each cluster's cycle, lost-cluster checks) must go
// on running on their timers afterwards: the sweeper is what sends again a BindRequest whose
// queue job vanished with Redis, and nothing else triggers it.
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SerialTask, type SerialTaskOptions } from "../../workers/serial-task.js";
import { until as waitFor } from "../agent/until.js";
import { TEST_REDIS_URL, deleteTestKeys, testRedisPrefix } from "../helpers/redis.js";
import { OwnRedis } from "../helpers/topology/services.js";
import { bindRequestsOfJobs, MAX_BIND_REQUESTS_PAGE } from "../../src/store/index.js";
import { ControlPlane, gpuJob, TWO_NODES_OF_FOUR_GPUS } from "./harness.js";

/** Resolves once `count()` reaches `n` (the test's own timeout bounds the wait). */
async function until(count: () => number, n: number): Promise<void> {
  while (count() < n) await new Promise((r) => setTimeout(r, 20));
}

function outboxTask(connection: Redis, prefix: string, runs: string[]): SerialTaskOptions {
  return {
    connection,
    prefix: `${prefix}workers`,
    name: "outbox",
    intervalMs: 200,
    lockDurationMs: 5000,
    stalledIntervalMs: 5000,
    triggerDelayMs: 0,
    log: pino({ level: "silent" }),
    run: async (reason: string) => {
      runs.push(reason);
    },
  };
}

const timerRuns = (runs: string[]) => runs.filter((r) => r === "timer").length;

describe("serial tasks after Redis restarted empty", () => {
  let own: OwnRedis;
  let redis: Redis;

  beforeAll(async () => {
    own = await OwnRedis.start();
    redis = new Redis(own.url, { maxRetriesPerRequest: null });
    redis.on("error", () => {}); // down while restarting: ioredis reconnects
  }, 60_000);
  afterAll(async () => {
    redis?.disconnect();
    await own?.stop();
  });

  it("run on their timer again, with their one-at-a-time limit", async () => {
    const runs: string[] = [];
    const options = outboxTask(redis, "fleetq-redis-restart:", runs);
    // Two processes' worth of the task: the limit of one run at a time must come back too.
    const tasks = [await SerialTask.start(options), await SerialTask.start(options)];
    try {
      await until(() => runs.length, 2);
      await own.restart(300);
      const before = timerRuns(runs);
      await until(() => timerRuns(runs), before + 3);
      expect(await redis.hget("fleetq-redis-restart:workers:outbox:meta", "concurrency")).toBe("1");
    } finally {
      await Promise.all(tasks.map((t) => t.stop()));
    }
  }, 60_000);
});

describe("a serial task whose timer lost its next run", () => {
  const prefix = testRedisPrefix("fleetq-lost-timer-run");
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  });
  afterAll(async () => {
    await deleteTestKeys(prefix, redis);
    redis.disconnect();
  });

  it("schedules the timer again", async () => {
    const runs: string[] = [];
    const task = await SerialTask.start(outboxTask(redis, prefix, runs));
    try {
      await until(() => timerRuns(runs), 2);
      // The schedule stays; the delayed run it would fire next is lost.
      const q = `${prefix}workers:outbox`;
      const lost = (await redis.zrange(`${q}:delayed`, "0", "-1")).map((id) => `${q}:${id}`);
      expect(lost.some((key) => key.startsWith(`${q}:repeat:timer:`))).toBe(true);
      await redis.del(`${q}:delayed`, `${q}:wait`, `${q}:prioritized`, ...lost);
      expect(await redis.exists(`${q}:repeat:timer`)).toBe(1);
      const before = timerRuns(runs);
      await until(() => timerRuns(runs), before + 3);
    } finally {
      await task.stop();
    }
  }, 20_000);
});

describe("a BindRequest whose queue job vanished with Redis", () => {
  let own: OwnRedis;
  let cp: ControlPlane;

  beforeAll(async () => {
    own = await OwnRedis.start();
    cp = await ControlPlane.start({ redisUrl: own.url });
    await cp.createQueue("team-a");
    await cp.addCluster("c1", TWO_NODES_OF_FOUR_GPUS);
    await cp.startWorkers({ redispatchAfterMs: 1000 });
  }, 180_000); // the API, agent and workers start beside every other test file
  afterAll(async () => {
    await cp?.close();
    await own?.stop();
  });

  it("is sent again, and its job runs", async () => {
    // The agent is away: the request stays on the queue, DISPATCHED.
    await cp.stopAgent("c1");
    const id = await cp.submit(gpuJob("lost-bind", "team-a", 1, 1));
    await cp.jobInState(id, "ADMITTED");
    const store = cp.api.server.store;
    await waitFor(async () => {
      const rows = (await bindRequestsOfJobs(store, [id], MAX_BIND_REQUESTS_PAGE)).get(id) ?? [];
      expect(rows.map((r) => r.state)).toEqual(["DISPATCHED"]);
    });
    // Redis restarts empty: queues, timers, locks and the agents' outcome records are gone.
    await own.restart(300);
    await cp.restartCluster("c1", TWO_NODES_OF_FOUR_GPUS);
    const job = await cp.jobInState(id, "RUNNING");
    expect(job.pods.map((p) => p.state)).toEqual(["RUNNING"]);
  }, 120_000);
});
