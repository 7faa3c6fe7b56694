// Gang restarts in the store, through the agents' reports: a failed pod (or one that vanished)
// restarts the whole gang once — its pods on nodes evicted, the rest pending, the next attempt
// held until every pod has stopped and the backoff has passed — and a report of the ended
// attempt that arrives late changes nothing.
import { afterAll, beforeAll, expect, it } from "vitest";
import { releaseRestartHolds } from "../../src/store/operations/gang-restarts.js";
import { reportBindResult, reportPodStatus } from "../../src/store/operations/report-pods.js";
import { reportPodInventory } from "../../src/store/operations/reconcile-pods.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { cancelJob } from "../../src/store/operations/jobs.js";
import { runCycle } from "../helpers/cycle.js";
import { eventsOfJobs, MAX_EVENTS_PAGE } from "../../src/store/index.js";
import type { TestStore } from "../helpers/store.js";
import {
  admin,
  agentOfC1,
  podsOf as podsOfJob,
  bindRequestsOf,
  job,
  jobOf,
  storeWithC1,
} from "./fixtures.js";

let t: TestStore;
const checker = { name: "restart-check" };

beforeAll(async () => {
  t = await storeWithC1();
});
afterAll(async () => t?.close());

const podsOf = (id: string) => podsOfJob(t, id);
const jobRow = (id: string) => jobOf(t, id);
/** A job's bind requests of `kind`, oldest first. */
const requestsOf = async (id: string, kind: "BIND" | "EVICT") =>
  (await bindRequestsOf(t, id)).filter((b) => b.kind === kind);
const eventOf = async (id: string, kind: string) =>
  (await eventsOfJobs(t.store, [id], MAX_EVENTS_PAGE)).get(id)!.find((e) => e.kind === kind)!;
const lastBinds = async (id: string) => new Map((await requestsOf(id, "BIND")).map((b) => [b.podId, b.id]));

/** A gang of `replicas` one-GPU pods with a restart policy, placed and running on c1. */
async function runningGang(
  name: string,
  replicas: number,
  restartPolicy: { maxRestarts: number; backoffSeconds?: number; onExitCodes?: number[] },
) {
  const { job: j } = await submitJob(
    t.store,
    admin,
    job({
      name,
      cluster: "c1",
      restartPolicy,
      tasks: [{ name: "w", replicas, resources: { cpu: 1000, memory: "1Gi", gpu: 1 } }],
    }),
  );
  await runCycle(t.store, "c1");
  const binds = await lastBinds(j.id);
  await reportBindResult(t.store, agentOfC1, {
    cluster: "c1",
    results: [...binds.values()].map((id) => ({ bindRequest: id, ok: true })),
  });
  await reportPodStatus(t.store, agentOfC1, {
    cluster: "c1",
    updates: (await podsOf(j.id)).map((p) => ({
      job: j.id,
      pod: p.name,
      state: "RUNNING",
      bindRequest: binds.get(p.id),
    })),
  });
  expect((await jobRow(j.id)).state).toBe("RUNNING");
  return j;
}

/** The agent carries out the gang's EVICT requests. */
async function confirmEvictions(id: string) {
  const evicts = (await requestsOf(id, "EVICT")).filter((b) => b.state === "PENDING");
  await reportBindResult(t.store, agentOfC1, {
    cluster: "c1",
    results: evicts.map((b) => ({ bindRequest: b.id, ok: true })),
  });
  return evicts;
}

it("restarts the gang once on a failure, holds the next attempt until its pods stopped and the backoff passed", async () => {
  const j = await runningGang("restart", 3, { maxRestarts: 2, backoffSeconds: 60 });
  const binds = await lastBinds(j.id);
  const failed = (await podsOf(j.id)).find((p) => p.name === "w-1")!;
  await reportPodStatus(t.store, agentOfC1, {
    cluster: "c1",
    updates: [
      {
        job: j.id,
        pod: "w-1",
        state: "FAILED",
        exitCode: 7,
        bindRequest: binds.get(failed.id),
        message: "Error",
      },
    ],
  });
  let row = await jobRow(j.id);
  expect(row.restarts).toBe(1);
  expect(row.restartAfter).not.toBeNull();
  expect(row.state).toBe("PENDING");
  expect(row.startedAt).toBeNull();
  expect((row.pendingReason as { message: string }).message).toContain("restarting (attempt 2)");
  expect((await podsOf(j.id)).map((p) => [p.name, p.state])).toEqual([
    ["w-0", "RELEASING"],
    ["w-1", "PENDING"],
    ["w-2", "RELEASING"],
  ]);
  const evicts = await requestsOf(j.id, "EVICT");
  // The evictions end runs of the first attempt (restarts 0): the agent names those pods so.
  expect(evicts.map((b) => b.restarts)).toEqual([0, 0]);
  const event = await eventOf(j.id, "job.restarted");
  expect(event.message).toContain("pod w-1 failed with exit code 7");

  // The failed pod's report comes again (a retried report): the gang does not restart twice.
  await reportPodStatus(t.store, agentOfC1, {
    cluster: "c1",
    updates: [{ job: j.id, pod: "w-1", state: "FAILED", exitCode: 7, bindRequest: binds.get(failed.id) }],
  });
  expect((await jobRow(j.id)).restarts).toBe(1);
  expect((await podsOf(j.id)).find((p) => p.name === "w-1")?.state).toBe("PENDING");

  // Held: pods still on their nodes, and the backoff not yet over.
  expect((await releaseRestartHolds(t.store, checker)).jobs).toBe(0);
  await confirmEvictions(j.id);
  expect((await podsOf(j.id)).map((p) => p.state)).toEqual(["PENDING", "PENDING", "PENDING"]);
  // While held, a cycle places nothing of the gang.
  await runCycle(t.store, "c1");
  expect((await podsOf(j.id)).map((p) => p.state)).toEqual(["PENDING", "PENDING", "PENDING"]);
  expect((await releaseRestartHolds(t.store, checker)).jobs).toBe(0);
  const later = new Date(Date.now() + 61_000);
  expect(await releaseRestartHolds(t.store, checker, { now: later })).toEqual({ jobs: 1, clusters: ["c1"] });
  row = await jobRow(j.id);
  expect(row.restartAfter).toBeNull();
  await runCycle(t.store, "c1");
  expect((await podsOf(j.id)).map((p) => p.state)).toEqual(["BINDING", "BINDING", "BINDING"]);
  const rebinds = (await requestsOf(j.id, "BIND")).filter((b) => b.restarts === 1);
  expect(rebinds).toHaveLength(3);
  await cancelJob(t.store, admin, { id: j.id });
});

it("counts a pod that vanished from its cluster as a failure", async () => {
  const j = await runningGang("vanish", 2, { maxRestarts: 1, backoffSeconds: 0 });
  const pods = await podsOf(j.id);
  // The cluster's complete inventory lists only w-0.
  await reportPodInventory(t.store, agentOfC1, { cluster: "c1", pods: [{ job: j.id, pod: "w-0" }] });
  const row = await jobRow(j.id);
  expect(row.restarts).toBe(1);
  expect((await podsOf(j.id)).map((p) => [p.name, p.state])).toEqual([
    ["w-0", "RELEASING"],
    ["w-1", "PENDING"],
  ]);
  expect(pods).toHaveLength(2);
  await cancelJob(t.store, admin, { id: j.id });
});

it("fails the job when the restarts are used up, or on an exit code that is not one to restart on", async () => {
  for (const [name, policy, code, says] of [
    ["spent", { maxRestarts: 0 }, 1, "no restarts left (0 of 0 used)"],
    [
      "picky",
      { maxRestarts: 5, onExitCodes: [137, 143] as number[] },
      2,
      "exit code 2 is not one that restarts it",
    ],
  ] as const) {
    const j = await runningGang(name, 2, policy);
    const binds = await lastBinds(j.id);
    const w0 = (await podsOf(j.id)).find((p) => p.name === "w-0")!;
    await reportPodStatus(t.store, agentOfC1, {
      cluster: "c1",
      updates: [{ job: j.id, pod: "w-0", state: "FAILED", exitCode: code, bindRequest: binds.get(w0.id) }],
    });
    const row = await jobRow(j.id);
    expect(row.state).toBe("FAILED");
    expect(row.restarts).toBe(0);
    const failed = await eventOf(j.id, "job.failed");
    expect(failed.message).toContain(says);
    // The rest of the gang is stopped.
    expect((await podsOf(j.id)).map((p) => [p.name, p.state, p.exitCode])).toEqual([
      ["w-0", "FAILED", code],
      ["w-1", "RELEASING", null],
    ]);
    await confirmEvictions(j.id);
    expect((await podsOf(j.id)).map((p) => p.state)).toEqual(["FAILED", "FAILED"]);
  }
});

it("leaves jobs without a restart policy as they were: a failed pod fails only itself", async () => {
  const { job: j } = await submitJob(
    t.store,
    admin,
    job({
      name: "plain",
      cluster: "c1",
      tasks: [{ name: "w", replicas: 2, resources: { cpu: 1000, gpu: 1 } }],
    }),
  );
  await runCycle(t.store, "c1");
  await reportPodStatus(t.store, agentOfC1, {
    cluster: "c1",
    updates: [
      { job: j.id, pod: "w-0", state: "RUNNING" },
      { job: j.id, pod: "w-1", state: "RUNNING" },
    ],
  });
  await reportPodStatus(t.store, agentOfC1, {
    cluster: "c1",
    updates: [{ job: j.id, pod: "w-0", state: "FAILED", exitCode: 1 }],
  });
  expect((await podsOf(j.id)).map((p) => p.state)).toEqual(["FAILED", "RUNNING"]);
  expect((await jobRow(j.id)).restarts).toBe(0);
  await cancelJob(t.store, admin, { id: j.id });
});
