// Each fault of the fault run (bench/faults.ts), short, under a light load on one deployed
// topology (2 API replicas, 2 worker processes, 3 simulated agents, its own PostgreSQL and
// Redis): after each, nothing lost, nothing stuck, nothing bound twice, no node over-committed
// (in the clusters or in the books), no gang left partly running, no queue above its limit, no
// pod held RUNNING that its cluster does not run, no pod run by a cluster that the books do not
// hold there. The faults run one after another on the same topology, which must come back from
// each before the next: each test starts from a settled system, so one fault's damage is charged
// to that fault.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BindRequestMessage } from "../../src/protocol/bind-request.js";
import { readClusterState, writeClusterState } from "../../src/agent/backends/simulated/state-file.js";
import { Checker, dbClient } from "../helpers/topology/checks.js";
import { allFaults } from "../helpers/topology/faults.js";
import { failures, runScenario } from "../helpers/topology/scenario.js";
import { Topology } from "../helpers/topology/topology.js";

const CUT_OFF_SECONDS = 8;

let topology: Topology;
let checker: Checker;

beforeAll(async () => {
  topology = await Topology.start();
  checker = new Checker(topology);
  checker.start();
}, 300_000);

afterAll(async () => {
  await checker?.stop();
  await topology?.stop();
}, 120_000);

describe.sequential("faults under load", () => {
  for (const fault of allFaults(CUT_OFF_SECONDS)) {
    it(`${fault.name}: ${fault.what}`, async () => {
      const r = await runScenario(topology, checker, fault, {
        rate: 1,
        warmupSeconds: 3,
        afterSeconds: 3,
        watchSeconds: 10,
        // settling goes on while jobs keep starting or finishing
        settleSeconds: 45,
        settleLimitSeconds: 240,
      });
      expect(r.submissions).toBeGreaterThan(0);
      expect(failures(r), [...r.details, ...r.stuckJobs].join("\n")).toEqual([]);
    }, 420_000);
  }

  // The checks themselves: runs written into a cluster's state file behind its agent's back (it
  // reads the file only when it starts, and writes it whole when its own pods start or end) — one
  // of a pod the books hold finished, one of a pod they do not know — are strays, in the check
  // after settling and in the samples.
  it("checks: a pod its cluster runs that the books do not hold there is a stray", async () => {
    const slot = [...topology.agents.values()].at(-1)!;
    const client = dbClient(topology.databaseUrl);
    await client.connect();
    const finished = await client
      .query<{ job: string; pod: string; queue: string; node: string }>(
        `SELECT p.job_id::text AS job, p.name AS pod, j.queue_name AS queue, p.node_name AS node
           FROM pod p JOIN job j ON j.id = p.job_id
          WHERE p.state = 'SUCCEEDED' AND j.cluster_name = $1 LIMIT 1`,
        [slot.cluster.name],
      )
      .finally(() => client.end());
    const done = finished.rows[0]!;
    const run = (job: string, pod: string, queue: string, node: string) => ({
      request: {
        id: randomUUID(),
        kind: "bind",
        cluster: slot.cluster.name,
        generation: 0,
        job: {
          id: job,
          name: "stray",
          namespace: "default",
          queue,
          createdInCluster: false,
          restarts: 0,
          workload: null,
        },
        pod: {
          name: pod,
          task: "main",
          resources: { cpuMillis: 100, memory: 1024, gpus: 0, gpuFraction: 0, gpuMemory: 0 },
          durationSeconds: 3600,
          exitFailure: false,
        },
        node,
        gpuGroups: [],
        gpuDevices: [],
        reason: "",
        attempt: 1,
      } satisfies BindRequestMessage,
      startedAt: Date.now(),
    });
    // the agent writes the file whole when a pod of its own ends: until it runs none
    const end = Date.now() + 60_000;
    while (readClusterState(slot.stateFile).pods.length > 0 && Date.now() < end)
      await new Promise((r) => setTimeout(r, 200));
    const real = readClusterState(slot.stateFile).pods;
    const unknown = randomUUID();
    writeClusterState(slot.stateFile, [
      ...real,
      run(done.job, done.pod, done.queue, done.node),
      run(unknown, "main-0", done.queue, done.node),
    ]);
    try {
      checker.take();
      const strays = await checker.strayPods();
      // samples 3 s or more apart, on a loaded machine
      await new Promise((r) => setTimeout(r, 8000));
      const sampled = checker.take().strayPods;
      const expected = [`${done.job}/${done.pod}`, `${unknown}/main-0`].sort();
      expect([...strays.keys()].sort()).toEqual(expected);
      expect([...sampled].sort()).toEqual(expected);
      expect(strays.get(`${done.job}/${done.pod}`)).toContain("SUCCEEDED");
    } finally {
      const now = readClusterState(slot.stateFile).pods.filter((p) => p.request.job.name !== "stray");
      writeClusterState(slot.stateFile, now);
    }
  }, 120_000);
});
