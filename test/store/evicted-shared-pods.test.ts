// A pod the session evicts keeps running on the device it holds until the agent evicts it, and
// the books keep it there. Consolidation moves GPU-memory pods between devices of one node
// (evicted, pipelined onto another device's group) and a later action of the same session may
// evict them again: the session then ends with them releasing in the group they were moved to.
// Written there, the books held them in a group whose memory other pods hold (a shared GPU of
// 81,920 MiB at 163,840 in the books, never in the cluster) and left their own device free for
// the next cycle to bind onto while they still ran on it.
import { sql } from "../helpers/db.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { SessionResult } from "../../src/core/index.js";
import { registerCluster } from "../../src/store/operations/clusters.js";
import { commitSession } from "../../src/store/operations/commit-session.js";
import { createQueue } from "../../src/store/operations/queues.js";
import { reportNodes } from "../../src/store/operations/report-nodes.js";
import { reportPodStatus } from "../../src/store/operations/report-pods.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { loadSnapshot } from "../../src/store/snapshot/load-snapshot.js";
import { runCycle } from "../helpers/cycle.js";
import { openTestStore, type TestStore } from "../helpers/store.js";
import { admin, job, podsOf } from "./fixtures.js";

const MIB = 81_920;
const agent = { name: "agent:c1" };
let t: TestStore;

beforeAll(async () => {
  t = await openTestStore();
  await createQueue(t.store, admin, { name: "team-a" });
  await registerCluster(t.store, admin, { name: "c1" });
  // One node that reports its devices: a newly shared device's group is named by its index.
  await reportNodes(t.store, agent, {
    cluster: "c1",
    complete: true,
    nodes: [
      {
        name: "n1",
        capacity: { cpu: 128_000, memory: "1Ti", gpu: 2, gpuMemory: 2 * MIB },
        gpuModel: "A100",
        gpuDevices: [
          { index: 0, nvlinkDomain: "nvlink0" },
          { index: 1, nvlinkDomain: "nvlink0" },
        ],
      },
    ],
  });
});
afterAll(async () => t?.close());

const gang = (name: string) =>
  job({
    name,
    cluster: "c1",
    tasks: [{ name: "w", replicas: 4, resources: { cpu: 500, memory: "1Gi", gpuMemory: 20_480 } }],
  });

/** GPU memory the books hold per shared group of n1 (pods BINDING, RUNNING or RELEASING). */
async function groupsOfN1(): Promise<Record<string, number>> {
  const pods = await sql<{ gpuGroups: string[]; gpuMemory: number }>(
    t.testDb.url,
    `SELECT gpu_groups AS "gpuGroups", gpu_memory AS "gpuMemory" FROM pod
     WHERE node_name = 'n1' AND state IN ('BINDING', 'RUNNING', 'RELEASING')`,
  );
  const out: Record<string, number> = {};
  for (const p of pods) for (const g of p.gpuGroups) out[g] = (out[g] ?? 0) + p.gpuMemory;
  return out;
}

async function runAll(jobId: string): Promise<void> {
  const pods = await podsOf(t, jobId);
  await reportPodStatus(t.store, agent, {
    cluster: "c1",
    updates: pods.map((p) => ({ job: jobId, pod: p.name, state: "RUNNING" as const })),
  });
}

it("a pod moved to another device of its node and evicted there stays RELEASING on its own device", async () => {
  const { job: a } = await submitJob(t.store, admin, gang("a"));
  await runCycle(t.store, "c1");
  const { job: b } = await submitJob(t.store, admin, gang("b"));
  await runCycle(t.store, "c1");
  await runAll(a.id);
  await runAll(b.id);
  const aPods = await podsOf(t, a.id);
  const bPods = await podsOf(t, b.id);
  const own = aPods[0]!.gpuGroups;
  const other = bPods[0]!.gpuGroups;
  expect(aPods.every((p) => p.state === "RUNNING" && p.gpuGroups.join() === own.join())).toBe(true);
  expect(other).not.toEqual(own);
  expect(await groupsOfN1()).toEqual({ [own[0]!]: MIB, [other[0]!]: MIB });

  // The session the core decides on this snapshot in such a cycle: consolidation moves a's pods
  // onto b's device (pipelined there, as b's pods are moved away in the same pass), and reclaim
  // then evicts them there, so they end releasing in b's group.
  const { generation, rows } = await loadSnapshot(t.store, "c1");
  const result: SessionResult = {
    binds: [],
    pipelines: aPods.map((p) => ({
      job: a.id,
      pod: p.id,
      node: "n1",
      gpuGroups: other,
      action: "consolidation" as const,
    })),
    evictions: [
      ...aPods.map((p) => ({
        job: a.id,
        pod: p.id,
        node: "n1",
        action: "consolidation" as const,
        message: "moved",
      })),
      ...aPods.map((p) => ({
        job: a.id,
        pod: p.id,
        node: "n1",
        action: "reclaim" as const,
        message: "reclaimed",
      })),
    ],
    pods: aPods.map((p) => ({
      job: a.id,
      pod: p.id,
      status: "Releasing" as const,
      node: "n1",
      gpuGroups: other,
    })),
    jobs: [],
    queues: [],
    searchCursors: [],
  };
  const commit = await commitSession(t.store, "c1", generation, result, rows);

  // a's pods run on their own device until evicted: RELEASING there, one eviction each.
  expect(await groupsOfN1()).toEqual({ [own[0]!]: MIB, [other[0]!]: MIB });
  expect((await podsOf(t, a.id)).map((p) => [p.state, p.gpuGroups])).toEqual(
    aPods.map(() => ["RELEASING", own]),
  );
  expect(commit.bindRequests.map((r) => [r.kind, r.gpuGroups])).toEqual(aPods.map(() => ["EVICT", own]));

  // The next gang waits for a's device: pipelined, never bound onto what a still holds.
  const { job: c } = await submitJob(t.store, admin, gang("c"));
  await runCycle(t.store, "c1");
  expect((await podsOf(t, c.id)).map((p) => p.state)).not.toContain("BINDING");
  const groups = await groupsOfN1();
  for (const g of Object.values(groups)) expect(g).toBeLessThanOrEqual(MIB);
});
