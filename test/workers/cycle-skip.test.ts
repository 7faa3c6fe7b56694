// When a cycle is skipped, against real PostgreSQL and Redis: exactly when it could not decide
// anything new — the cluster's rows, queues and quotas are those the last cycle decided on, that
// cycle decided nothing, and no time-dependent rule (min-runtime, stale-gang grace, bind backoff,
// search-cursor expiry) can change the result yet. Random sequences of changes and waits check
// every skipped cycle by running it anyway, from scratch: it must decide and write nothing.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { testCycleDeps } from "../helpers/cycle-deps.js";
import { defaultSchedulerConfig, type SchedulerConfig } from "../../src/core/index.js";
import {
  ClusterCache,
  createQueue,
  registerCluster,
  reportNodes,
  reportPodStatus,
  setQueueQuota,
  submitJob,
} from "../../src/store/index.js";
import type { CycleDeps } from "../../workers/cycle/run-cycle.js";
import { BindDispatcher } from "../../workers/dispatch/bind-dispatcher.js";
import { runCycle } from "../../workers/index.js";
import { REPORT_TRIGGER } from "../../workers/triggers.js";
import { reportSomeBindResults, reportSomePodPhases } from "../helpers/agent-reports.js";
import { TEST_REDIS_URL, deleteTestKeys, testRedisPrefix } from "../helpers/redis.js";
import { type Prng, prng } from "../helpers/prng.js";
import { openTestStore, type TestStore } from "../helpers/store.js";
import { admin, gpuNode, job, podsOf } from "../store/fixtures.js";

let t: TestStore;
let redis: Redis;
const prefix = testRedisPrefix("fleetq-skip");

/** Min-runtime protection and a short stale-gang grace, so that time matters. */
function timedConfig(): SchedulerConfig {
  const config = defaultSchedulerConfig();
  config.session.stalenessGracePeriodSeconds = 20;
  const plugins = config.tiers[0]!.plugins;
  const args = { preemptMinRuntime: "30s", reclaimMinRuntime: "45s" };
  const minRuntime = plugins.find((p) => p.name === "minruntime");
  if (minRuntime) minRuntime.arguments = args;
  else plugins.push({ name: "minruntime", arguments: args });
  return config;
}

function cycleDeps(config: SchedulerConfig, dispatcher: BindDispatcher): CycleDeps {
  return testCycleDeps({ store: t.store, dispatcher, redis, prefix }, { config });
}

let dispatcher: BindDispatcher;

beforeAll(async () => {
  t = await openTestStore();
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  dispatcher = new BindDispatcher(t.store, redis, `${prefix}bind`);
  await createQueue(t.store, admin, { name: "org" });
  await createQueue(t.store, admin, { name: "team-a", parent: "org" });
  await createQueue(t.store, admin, { name: "team-b", parent: "org" });
  for (const q of ["team-a", "team-b"])
    await setQueueQuota(t.store, admin, { queue: q, resource: "GPU", deserved: 4 });
});
afterAll(async () => {
  vi.useRealTimers();
  await dispatcher?.close();
  await deleteTestKeys(prefix, redis);
  redis?.disconnect();
  await t?.close();
});

describe("cycle skip", () => {
  it("skips only a cycle whose inputs are those the last one decided nothing on", async () => {
    await registerCluster(t.store, admin, { name: "c0" });
    await reportNodes(
      t.store,
      { name: "agent:c0" },
      { cluster: "c0", complete: true, nodes: [gpuNode("n1", 8)] },
    );
    const deps = cycleDeps(defaultSchedulerConfig(), dispatcher);
    const first = await submitJob(t.store, admin, job({ queue: "team-a", cluster: "c0" }));
    expect(await runCycle(deps, "c0", "timer")).toMatchObject({ skipped: false, binds: 2 });
    // It committed: the next cycle runs whatever asks for it, and finds nothing to do.
    expect(await runCycle(deps, "c0", REPORT_TRIGGER)).toMatchObject({ skipped: false, binds: 0 });
    expect((await runCycle(deps, "c0", "timer")).skipped).toBe(true);
    expect((await runCycle(deps, "c0", "event")).skipped).toBe(true);
    const pods = await podsOf(t, first.job.id);
    await reportPodStatus(
      t.store,
      { name: "agent:c0" },
      {
        cluster: "c0",
        updates: pods.map((p) => ({ job: first.job.id, pod: p.name, state: "RUNNING" as const })),
      },
    );
    expect(await runCycle(deps, "c0", REPORT_TRIGGER)).toMatchObject({ skipped: false, binds: 0 });
    expect((await runCycle(deps, "c0", "timer")).skipped).toBe(true);
    // A job arrives (its event missed): the timer's cycle sees it and places it.
    await submitJob(t.store, admin, job({ name: "second", queue: "team-a", cluster: "c0" }));
    expect(await runCycle(deps, "c0", "timer")).toMatchObject({ skipped: false, binds: 2 });
  });

  it.each([
    [1, 0],
    [2, 0],
    [3, 0],
    [4, 2],
  ])("a skipped cycle, run anyway, decides nothing (random changes and waits, seed %i, placement limit %i)", async (seed, maxPlacements) => {
    const cluster = `r${seed}`;
    await registerCluster(t.store, admin, { name: cluster });
    await reportNodes(
      t.store,
      { name: `agent:${cluster}` },
      {
        cluster,
        complete: true,
        nodes: [gpuNode("n1", 4), gpuNode("n2", 4)],
      },
    );
    const config = timedConfig();
    const deps = { ...cycleDeps(config, dispatcher), maxPlacements };
    const r = prng(seed);
    let now = Date.now();
    vi.useFakeTimers({ toFake: ["Date"], now });
    let skipped = 0;
    try {
      for (let step = 0; step < 60; step++) {
        const what = await randomChange(r, cluster, step);
        if (what === "wait") {
          now += 1_000 + r.int(40_000);
          vi.setSystemTime(now);
        }
        const report = await runCycle(deps, cluster, "timer");
        expect(report.error, `step ${step} (${what})`).toBeNull();
        if (!report.skipped) continue;
        skipped++;
        // The same cycle from scratch: another process's cache, no memory of earlier cycles.
        const probe = await runCycle(
          { ...deps, cache: new ClusterCache(t.store), memory: new Map() },
          cluster,
          "timer",
        );
        expect(probe, `skipped at step ${step} (${what})`).toMatchObject({
          skipped: false,
          error: null,
          binds: 0,
          evictions: 0,
          pipelines: 0,
          jobsChanged: 0,
        });
        // …and wrote nothing the cluster's view is built from.
        expect((await deps.cache.refresh(cluster)).unchanged, `skipped at step ${step}`).toBe(true);
      }
    } finally {
      vi.useRealTimers();
    }
    expect(skipped).toBeGreaterThan(5);
  });
});

async function randomChange(r: Prng, cluster: string, step: number): Promise<string> {
  const agent = { name: `agent:${cluster}` };
  switch (r.int(6)) {
    case 0: {
      const replicas = 1 + r.int(3);
      await submitJob(
        t.store,
        admin,
        job({
          name: `j${step}`,
          queue: r.pick(["team-a", "team-b"]),
          cluster,
          tasks: [{ name: "w", replicas, resources: { cpu: 500, memory: "1Gi", gpu: 1 + r.int(2) } }],
        }),
      );
      return "submit";
    }
    case 1:
      await reportSomeBindResults(t, agent, cluster, r, { share: 0.7, ok: 0.7, message: "node refused" });
      return "bind results";
    case 2:
      await reportSomePodPhases(t, agent, cluster, r, 0.4, (state) =>
        state === "BINDING"
          ? "RUNNING"
          : state === "RELEASING"
            ? "SUCCEEDED"
            : r.pick(["SUCCEEDED", "FAILED", "RUNNING"] as const),
      );
      return "pod phases";
    default:
      return "wait";
  }
}
