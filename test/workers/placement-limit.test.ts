// A cycle's placement limit, against real PostgreSQL and Redis: a cycle places at most about
// `maxPlacements` pods (whole gangs), commits them, leaves what it said of the jobs it did not
// try as it was, and the workers run the next cycle at once — not on the next timer.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testCycleDeps } from "../helpers/cycle-deps.js";
import {
  createQueue,
  registerCluster,
  reportNodes,
  setQueueQuota,
  submitJob,
} from "../../src/store/index.js";
import type { CycleDeps } from "../../workers/cycle/run-cycle.js";
import { BindDispatcher } from "../../workers/dispatch/bind-dispatcher.js";
import { runCycle } from "../../workers/index.js";
import { until } from "../agent/until.js";
import { TEST_REDIS_URL, deleteTestKeys, testRedisPrefix } from "../helpers/redis.js";
import { sql } from "../helpers/db.js";
import { openTestStore, type TestStore } from "../helpers/store.js";
import { admin, gpuNode, job, jobOf } from "../store/fixtures.js";
import { ControlPlane, gpuJob, TWO_NODES_OF_FOUR_GPUS } from "./harness.js";

let t: TestStore;
let redis: Redis;
let dispatcher: BindDispatcher;
const prefix = testRedisPrefix("fleetq-limit");

beforeAll(async () => {
  t = await openTestStore();
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  dispatcher = new BindDispatcher(t.store, redis, `${prefix}bind`);
  await createQueue(t.store, admin, { name: "team" });
  await setQueueQuota(t.store, admin, { queue: "team", resource: "GPU", deserved: 16 });
});
afterAll(async () => {
  await dispatcher?.close();
  await deleteTestKeys(prefix, redis);
  redis?.disconnect();
  await t?.close();
});

function cycleDeps(maxPlacements: number): CycleDeps {
  return testCycleDeps({ store: t.store, dispatcher, redis, prefix }, { maxPlacements });
}

/** Jobs of c1 with a pod on a node. */
async function placedJobs(): Promise<Set<string>> {
  const pods = await sql<{ jobId: string }>(
    t.testDb.url,
    `SELECT p.job_id::text AS "jobId" FROM pod p JOIN job j ON j.id = p.job_id
     WHERE j.cluster_name = 'c1' AND p.node_name IS NOT NULL`,
  );
  return new Set(pods.map((p) => p.jobId));
}

const reasonOf = async (id: string) => (await jobOf(t, id)).pendingReason as { message: string } | null;

describe("a cycle's placement limit", () => {
  it("places whole gangs up to the limit per cycle, in order, until the backlog is placed", async () => {
    await registerCluster(t.store, admin, { name: "c1" });
    await reportNodes(
      t.store,
      { name: "agent:c1" },
      { cluster: "c1", complete: true, nodes: [gpuNode("n1", 8), gpuNode("n2", 8)] },
    );
    // Tried first (highest priority) and never fits: its reason is the session's.
    const huge = await submitJob(
      t.store,
      admin,
      job({
        name: "huge",
        queue: "team",
        cluster: "c1",
        priority: 200,
        preemptible: true,
        tasks: [gpuTask(3, 8)],
      }),
    );
    const gangs: string[] = [];
    for (let i = 0; i < 6; i++)
      gangs.push(
        (
          await submitJob(
            t.store,
            admin,
            job({ name: `g${i}`, queue: "team", cluster: "c1", tasks: [gpuTask(2, 1)] }),
          )
        ).job.id,
      );
    const waiting = (await reasonOf(gangs[5]!))!.message;

    const deps = cycleDeps(3);
    const first = await runCycle(deps, "c1", "timer");
    // g0 (2 pods) is under the limit, g1 takes it to 4: whole gangs only.
    expect(first).toMatchObject({ error: null, binds: 4, stoppedAtLimit: true });
    expect(await placedJobs()).toEqual(new Set(gangs.slice(0, 2)));
    expect((await reasonOf(huge.job.id))!.message).toMatch(/^c1: /);
    // The jobs it did not get to keep what was said of them.
    expect((await reasonOf(gangs[5]!))!.message).toBe(waiting);

    const second = await runCycle(deps, "c1", "placement-limit");
    expect(second).toMatchObject({ error: null, binds: 4, stoppedAtLimit: true });
    expect(await placedJobs()).toEqual(new Set(gangs.slice(0, 4)));
    const third = await runCycle(deps, "c1", "placement-limit");
    // The last two gangs: nothing is left in the queue when the limit is reached.
    expect(third).toMatchObject({ error: null, binds: 4, stoppedAtLimit: false });
    expect(await placedJobs()).toEqual(new Set(gangs));
    const fourth = await runCycle(deps, "c1", "report");
    expect(fourth).toMatchObject({ error: null, binds: 0, stoppedAtLimit: false });
    expect((await reasonOf(huge.job.id))!.message).toMatch(/^c1: /);
  });

  it("the workers run the next cycle at once after one stopped at the limit", async () => {
    const cp = await ControlPlane.start();
    try {
      await cp.createQueue("team");
      await cp.setQuota("team", "GPU", 8);
      await cp.addCluster("c1", TWO_NODES_OF_FOUR_GPUS);
      // The timer would bring a cycle only after 60 s: each cycle places one gang of 2.
      await cp.startWorkers({ cycleIntervalMs: 60_000, maxPlacementsPerCycle: 1 });
      const started = Date.now();
      // One call, one burst of events: one triggered cycle.
      const { submitJobs } = await cp.admin<{ submitJobs: { id: string }[] }>(
        "mutation($i: [SubmitJobInput!]!) { submitJobs(inputs: $i) { id } }",
        { i: Array.from({ length: 4 }, (_, i) => ({ ...gpuJob(`g${i}`, "team", 2, 1), cluster: "c1" })) },
      );
      await until(async () => {
        for (const { id } of submitJobs) expect((await cp.job(id)).state).toBe("RUNNING");
      }, 30_000);
      expect(Date.now() - started).toBeLessThan(30_000);
      // Each cycle stopped after one gang; one that followed it came from that stop itself.
      const cycles = await cp.events("cycle.completed");
      const binding = cycles.filter((e) => /: [1-9]\d* bind\(s\)/.test(e.message));
      expect(binding.length).toBeGreaterThanOrEqual(4);
      for (const e of binding) expect(e.message).toMatch(/: 2 bind\(s\)/);
      // Where each cycle's time went, for whoever reads the event.
      for (const e of binding)
        expect(e.message).toMatch(/; load \d+ ms, session \d+ ms, commit \d+ ms, dispatch \d+ ms$/);
      expect(binding.some((e) => e.message.includes("(trigger: placement-limit)"))).toBe(true);
    } finally {
      await cp.close();
    }
  });
});

function gpuTask(replicas: number, gpu: number) {
  return { name: "w", replicas, resources: { cpu: 500, memory: "1Gi", gpu } };
}
