// A worker process killed (SIGKILL) right after a cycle committed its placements — before or while
// sending them to the agent — loses nothing and binds nothing twice: the next worker takes the
// clusters over once the dead one's leases lapse (its first cycle there after a takeover is the
// next one killed), the outbox sweeper sends what was committed but
// never sent, and agents ignore repeats. Three such kills, then every job must run, every pod
// exactly once, and every BindRequest must have reached its agent.
import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, expect, it } from "vitest";
import { until } from "../agent/until.js";
import { countRows, sql } from "../helpers/db.js";
import { ControlPlane, gpuJob } from "./harness.js";

const CLUSTER = `
nodeGroups:
  - { name: gpu, count: 16, cpu: 64, memory: 512Gi, gpus: 8, gpuModel: A100, gpuMemoryMiB: 81920 }
`;
const CLUSTERS = ["c1", "c2"];
const ROUNDS = 3;
const JOBS_PER_ROUND = 15;
const PODS_PER_JOB = 2;

let cp: ControlPlane;

beforeAll(async () => {
  cp = await ControlPlane.start();
  await cp.createQueue("team-a");
  for (const c of CLUSTERS) await cp.addCluster(c, CLUSTER);
}, 180_000); // the API, agents and workers start beside every other test file
afterAll(async () => cp?.close());

/** Starts a worker that is SIGKILLed as soon as it logs a committed cycle; resolves on its death. */
async function workerKilledAfterCommit(id: string): Promise<{ died: Promise<void> }> {
  let armed = true;
  let dead!: () => void;
  const died = new Promise<void>((resolve) => {
    dead = resolve;
  });
  const onLine = (line: string, child: ChildProcess) => {
    if (!armed || !line.includes('"msg":"cycle committed; dispatching"')) return;
    armed = false;
    child.once("exit", () => dead());
    child.kill("SIGKILL");
  };
  // A cycle waiting from the last round may commit before the worker says it runs: killed then,
  // it never gets to say so, and that is the death this test is after.
  await cp.spawnWorker(id, {}, onLine).catch((err: Error) => {
    if (armed) throw err;
  });
  return { died }; // wrapped: an async function would wait for a returned promise
}

async function submitRound(round: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < JOBS_PER_ROUND; i++) {
    const cluster = i % 3 === 2 ? undefined : CLUSTERS[i % 2];
    ids.push(
      await cp.submit({
        ...gpuJob(`r${round}-j${i}`, "team-a", PODS_PER_JOB, 1),
        ...(cluster ? { cluster } : {}),
      }),
    );
  }
  return ids;
}

it("loses no BindRequest and binds no pod twice when workers die mid-cycle", async () => {
  const url = cp.api.db.url;
  const jobs: string[] = [];
  let roundsWithUnsent = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const { died } = await workerKilledAfterCommit(`doomed-${round}`);
    jobs.push(...(await submitRound(round)));
    await died;
    if (process.env.WORKERS_TEST_LOG) console.error(`round ${round}: worker killed`);
    // Committed but never sent: the kill fell between the commit and the send.
    if ((await countRows(url, "bind_request", "state = 'PENDING'")) > 0) roundsWithUnsent++;
  }
  await cp.spawnWorker("survivor");

  await until(async () => {
    for (const id of jobs) expect((await cp.job(id)).state).toBe("RUNNING");
  }, 180_000);

  const pods = await sql<{ id: string; state: string; nodeName: string | null }>(
    url,
    `SELECT id::text, state::text, node_name AS "nodeName" FROM pod WHERE job_id = ANY($1::uuid[])`,
    [jobs],
  );
  expect(pods).toHaveLength(ROUNDS * JOBS_PER_ROUND * PODS_PER_JOB);
  expect(pods.every((p) => p.state === "RUNNING" && p.nodeName)).toBe(true);
  // One placement per pod, each carried out: none lost, none doubled.
  const requests = await sql<{ kind: string; podId: string; clusterName: string }>(
    url,
    `SELECT kind::text, pod_id::text AS "podId", cluster_name AS "clusterName" FROM bind_request WHERE job_id = ANY($1::uuid[])`,
    [jobs],
  );
  expect(requests.every((r) => r.kind === "BIND")).toBe(true);
  expect(new Set(requests.map((r) => r.podId)).size).toBe(pods.length);
  expect(requests).toHaveLength(pods.length);
  await until(async () => {
    const open = await countRows(url, "bind_request", "state <> 'SUCCEEDED'");
    expect(open).toBe(0);
  });
  const running = CLUSTERS.map((c) => cp.backends.get(c)!.cluster.runningPodCount).reduce((a, b) => a + b, 0);
  expect(running).toBe(pods.length);
  for (const c of CLUSTERS) {
    const here = pods.filter((p) => requests.find((r) => r.podId === p.id)!.clusterName === c);
    expect(cp.backends.get(c)!.cluster.runningPodCount).toBe(here.length);
  }
  // The outbox path was taken at least once (a kill between commit and send).
  expect(roundsWithUnsent).toBeGreaterThan(0);
}, 600_000);
