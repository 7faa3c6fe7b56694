// The faults injected into a running topology, each as it happens in production: a process
// SIGKILLed at a precise point, a service restarted or its connections cut, an agent cut off,
// a message delivered twice, a cluster that lost its pods. `inject` returns when the fault is
// over (what was killed restarted, as a supervisor would), with the moment the damage was done.
import { rmSync } from "node:fs";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { dbClient } from "./checks.js";
import type { Topology } from "./topology.js";

export interface Fault {
  name: string;
  /** What it does, for the docs' table. */
  what: string;
  inject(t: Topology): Promise<number>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(
  what: string,
  check: () => Promise<T | null | undefined | false>,
  timeoutMs: number,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check().catch(() => null);
    if (v) return v;
    if (Date.now() > end) throw new Error(`fault: timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** A worker waits for the cluster row (the commit's fence) while this holds it: it has loaded a
 * snapshot and decided, and is killed before its commit goes through. */
const workerBeforeCommit: Fault = {
  name: "worker-killed-before-commit",
  what: "SIGKILL of a worker between loading its snapshot and committing its decisions",
  async inject(t) {
    const lock = dbClient(t.databaseUrl);
    await lock.connect();
    let at = 0;
    try {
      await lock.query("BEGIN");
      await lock.query("SELECT name FROM cluster FOR UPDATE");
      const waiting = await until(
        "a worker waiting to commit",
        async () =>
          (
            await t.pg.query<{ app: string }>(
              "SELECT application_name AS app FROM pg_stat_activity WHERE application_name LIKE 'fleetq-worker-%' AND wait_event_type = 'Lock' LIMIT 1",
            )
          )[0]?.app,
        60_000,
      );
      const id = waiting.replace("fleetq-worker-", "");
      at = Date.now();
      await t.workers.get(id)?.kill("SIGKILL");
      t.workers.delete(id);
    } finally {
      await lock.query("ROLLBACK").catch(() => {});
      await lock.end().catch(() => {});
    }
    await t.startWorker();
    return at;
  },
};

/** Redis takes no writes for a moment: a cycle that commits meanwhile cannot send what it
 * committed; every worker is killed while the outbox holds those rows. */
const workerBeforeDispatch: Fault = {
  name: "worker-killed-before-dispatch",
  what: "SIGKILL of the workers between committing placements and sending them to the agents",
  async inject(t) {
    for (let attempt = 0; ; attempt++) {
      const pausedAt = new Date();
      await t.redis.command("CLIENT", "PAUSE", 15_000, "WRITE");
      let committed = false;
      try {
        committed = await until(
          "a cycle committed while Redis is paused",
          async () =>
            (
              await t.pg.query(
                `SELECT 1 FROM bind_request WHERE state = 'PENDING' AND created_at > $1 LIMIT 1`,
                [pausedAt],
                "fleetq",
              )
            ).length > 0,
          10_000,
        ).catch(() => false);
        if (committed) for (const w of t.workers.values()) await w.kill("SIGKILL");
      } finally {
        await t.redis.command("CLIENT", "UNPAUSE");
      }
      if (committed) {
        const at = Date.now();
        for (const id of [...t.workers.keys()]) await t.replaceWorker(id);
        return at;
      }
      if (attempt >= 5) throw new Error("fault: no cycle committed in six tries");
    }
  },
};

const apiKilled: Fault = {
  name: "api-replica-killed",
  what: "SIGKILL of an API replica under load (clients retry on the other with their idempotency keys)",
  async inject(t) {
    const at = Date.now();
    await t.apis[0]?.kill("SIGKILL");
    await sleep(5000);
    await t.startApi(0);
    return at;
  },
};

const redisRestarted: Fault = {
  name: "redis-restarted-empty",
  what: "Redis killed and started again without persistence (queues, locks, caches gone)",
  async inject(t) {
    const at = Date.now();
    await t.redis.restart(1000);
    return at;
  },
};

const postgresRestarted: Fault = {
  name: "postgres-restarted",
  what: "PostgreSQL stopped hard (immediate shutdown) and started again after 2 s",
  async inject(t) {
    const at = Date.now();
    await t.pg.restart(2000);
    return at;
  },
};

/** Waits until a worker is inside a transaction, then terminates every connection; three times. */
const postgresConnectionsTerminated: Fault = {
  name: "postgres-connections-terminated",
  what: "every PostgreSQL connection terminated (pg_terminate_backend) while a worker is mid-transaction, three times",
  async inject(t) {
    let at = 0;
    for (let i = 0; i < 3; i++) {
      await until(
        "a worker mid-transaction",
        async () =>
          (
            await t.pg.query(
              "SELECT 1 FROM pg_stat_activity WHERE application_name LIKE 'fleetq-worker-%' AND xact_start IS NOT NULL AND state <> 'idle' LIMIT 1",
            )
          ).length > 0,
        60_000,
      ).catch(() => true);
      at ||= Date.now();
      await t.pg.terminateAll();
      await sleep(1000);
    }
    return at;
  },
};

/** The agent's way to the API is cut, so binds it carries out stay unreported; it is killed with
 * some done, and restarted (its cluster kept running meanwhile). */
const agentKilledMidBind: Fault = {
  name: "agent-killed-mid-bind",
  what: "SIGKILL of an agent with binds carried out on its cluster but not yet reported",
  async inject(t) {
    const slot = firstAgent(t);
    const proc = slot.proc!;
    let done = 0;
    proc.watch((line) => {
      if (line.msg === "request done") done++;
      return false;
    });
    await slot.apiProxy.cut();
    await until("binds carried out and unreported", async () => done >= 3, 30_000).catch(() => true);
    const at = Date.now();
    await proc.kill("SIGKILL");
    await slot.apiProxy.restore();
    await t.startAgent(slot.cluster.name);
    return at;
  },
};

const agentCutOff = (seconds: number): Fault => ({
  name: "agent-cut-off",
  what: `an agent cut off from the API and Redis for ${seconds} s (TCP proxy) while its cluster runs pods`,
  async inject(t) {
    const slot = firstAgent(t);
    const at = Date.now();
    await Promise.all([slot.apiProxy.cut(), slot.redisProxy.cut()]);
    await sleep(seconds * 1000);
    await Promise.all([slot.apiProxy.restore(), slot.redisProxy.restore()]);
    return at;
  },
});

/** Completed BindRequests put on their queue again under new job ids (a producer re-sending):
 * agents must answer them from their record, not start the pods again. */
const bindDeliveredTwice: Fault = {
  name: "bind-request-delivered-twice",
  what: "completed BindRequests enqueued again (pods still running and pods already finished)",
  async inject(t) {
    const connection = new Redis(t.redis.url, { maxRetriesPerRequest: null });
    let at = 0;
    try {
      for (const cluster of t.agents.keys()) {
        const queue = new Queue(cluster, { connection, prefix: "bind" });
        const done = await queue.getCompleted(0, 100);
        at ||= Date.now();
        await queue.addBulk(
          done.map((job) => ({ name: job.name, data: job.data, opts: { jobId: `${job.id}-again` } })),
        );
        await queue.close();
      }
    } finally {
      connection.disconnect();
    }
    return at;
  },
};

/** The cluster loses every pod while its agent is away (the state file gone), as when a
 * simulated cluster restarts. */
const clusterRestartedEmpty: Fault = {
  name: "cluster-restarted-empty",
  what: "a simulated cluster restarted empty: its agent killed, its pods gone, the agent started again",
  async inject(t) {
    const slot = firstAgent(t);
    const at = Date.now();
    await slot.proc?.kill("SIGKILL");
    rmSync(slot.stateFile, { force: true });
    await t.startAgent(slot.cluster.name);
    return at;
  },
};

/** The agent the agent faults hit: the first cluster's (whole GPUs with device topology). */
function firstAgent(t: Topology) {
  return [...t.agents.values()][0]!;
}

export function allFaults(cutOffSeconds = 60): Fault[] {
  return [
    workerBeforeCommit,
    workerBeforeDispatch,
    apiKilled,
    redisRestarted,
    postgresRestarted,
    postgresConnectionsTerminated,
    agentKilledMidBind,
    agentCutOff(cutOffSeconds),
    bindDeliveredTwice,
    clusterRestartedEmpty,
  ];
}

export function faultNamed(name: string, cutOffSeconds = 60): Fault {
  const fault = allFaults(cutOffSeconds).find((f) => f.name === name);
  if (!fault) throw new Error(`no fault "${name}"`);
  return fault;
}
