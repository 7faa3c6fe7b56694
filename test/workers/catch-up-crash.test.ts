// A worker SIGKILLed while its cluster cache catches up with a batch of changes loses nothing: a
// second worker, alive throughout with a cache of its own kept current by deltas, goes on with
// the cluster's cycles; every job submitted runs, every cancelled job ends with nothing left on
// a node, every pod is placed once, and no node holds more GPUs than it has. Three rounds: each
// arms a new worker to die at the first catch-up it starts, then submits and cancels jobs
// (and small jobs after them until that worker has died).
import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, expect, it } from "vitest";
import { until } from "../agent/until.js";
import { countRows, sql } from "../helpers/db.js";
import { ControlPlane, gpuJob } from "./harness.js";

const CLUSTER = `
nodeGroups:
  - { name: gpu, count: 6, cpu: 64, memory: 512Gi, gpus: 8, gpuModel: A100, gpuMemoryMiB: 81920 }
`;
const GPUS_PER_NODE = 8;
const ROUNDS = 3;
const JOBS_PER_ROUND = 6;
const PODS_PER_JOB = 2;

let cp: ControlPlane;

beforeAll(async () => {
  cp = await ControlPlane.start();
  await cp.createQueue("team-a");
  await cp.addCluster("c1", CLUSTER);
}, 180_000); // the API, agents and workers start beside every other test file
afterAll(async () => cp?.close());

/** A worker that is SIGKILLed at the first catch-up it starts once armed; `died` resolves then. */
async function workerKilledInCatchUp(id: string): Promise<{ arm: () => void; died: Promise<void> }> {
  let armed = false;
  let dead!: () => void;
  const died = new Promise<void>((resolve) => {
    dead = resolve;
  });
  const onLine = (line: string, child: ChildProcess) => {
    if (!armed || !line.includes(`"msg":"catching up with the cluster's changes"`)) return;
    armed = false;
    child.once("exit", () => dead());
    child.kill("SIGKILL");
  };
  await cp.spawnWorker(id, { FLEETQ_LOG_LEVEL: "debug" }, onLine);
  return {
    arm: () => {
      armed = true;
    },
    died,
  };
}

it("loses nothing when a worker dies while catching up", async () => {
  const url = cp.api.db.url;
  await cp.spawnWorker("steady");
  let kept: string[] = [];
  const warmJobs: string[] = [];
  const cancelled: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const doomed = await workerKilledInCatchUp(`doomed-${round}`);
    // Let the doomed worker's cache hold the cluster first: its next read is a catch-up.
    const warm = await cp.submit({ ...gpuJob(`warm-${round}`, "team-a", 1, 1), cluster: "c1" });
    await cp.jobInState(warm, "RUNNING", 120_000);
    warmJobs.push(warm);
    doomed.arm();
    const batch: string[] = [];
    for (let i = 0; i < JOBS_PER_ROUND; i++)
      batch.push(await cp.submit({ ...gpuJob(`r${round}-j${i}`, "team-a", PODS_PER_JOB, 1), cluster: "c1" }));
    // Cancel one job of the batch and, from the second round on, the running warm-up job of the last.
    const victims = [batch[0]!, ...(round > 0 ? [warmJobs[round - 1]!] : [])];
    for (const id of victims) {
      await cp.admin("mutation($id: ID!) { cancelJob(id: $id) { state } }", { id });
      cancelled.push(id);
    }
    kept = [...kept, warm, ...batch].filter((id) => !cancelled.includes(id));
    // The doomed worker may have read the batch in a full load or left it to the other worker:
    // small jobs, one at a time, until it starts a catch-up.
    let dead = false;
    void doomed.died.then(() => {
      dead = true;
    });
    for (let n = 0; !dead; n++) {
      const nudge = await cp.submit({ ...gpuJob(`nudge-${round}-${n}`, "team-a", 1, 0), cluster: "c1" });
      kept.push(nudge);
      const running = cp.jobInState(nudge, "RUNNING", 120_000);
      running.catch(() => {}); // checked with every job kept at the end
      await Promise.race([doomed.died, running]);
    }
  }

  await until(async () => {
    for (const id of kept) expect((await cp.job(id)).state).toBe("RUNNING");
    for (const id of cancelled) expect((await cp.job(id)).state).toBe("CANCELLED");
  }, 180_000);

  const pods = await sql<{ state: string; nodeName: string | null }>(
    url,
    `SELECT state::text, node_name AS "nodeName" FROM pod WHERE job_id = ANY($1::uuid[])`,
    [kept],
  );
  expect(pods.every((p) => p.state === "RUNNING" && p.nodeName)).toBe(true);
  // One placement per pod of the jobs kept: none lost, none doubled.
  const binds = await sql<{ podId: string }>(
    url,
    `SELECT pod_id::text AS "podId" FROM bind_request WHERE job_id = ANY($1::uuid[]) AND kind = 'BIND'`,
    [kept],
  );
  expect(new Set(binds.map((r) => r.podId)).size).toBe(pods.length);
  expect(binds).toHaveLength(pods.length);
  // Nothing of the cancelled jobs holds a node.
  const leftOver = await countRows(
    url,
    "pod",
    "job_id = ANY($1::uuid[]) AND state IN ('BINDING', 'RUNNING')",
    [cancelled],
  );
  expect(leftOver).toBe(0);
  // No node over-committed, in the books and on the cluster.
  const held = await sql<{ gpus: number }>(
    url,
    `SELECT sum(gpus)::int AS gpus FROM pod WHERE state IN ('BINDING', 'RUNNING') AND node_name IS NOT NULL
     GROUP BY node_name`,
  );
  for (const n of held) expect(n.gpus).toBeLessThanOrEqual(GPUS_PER_NODE);
  await until(async () => {
    const running = await countRows(url, "pod", "state = 'RUNNING'");
    expect(cp.backends.get("c1")!.cluster.runningPodCount).toBe(running);
  });
}, 600_000);
