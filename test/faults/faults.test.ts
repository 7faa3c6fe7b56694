// Each fault of the fault run (bench/faults.ts), short, under a light load on one deployed
// topology (2 API replicas, 2 worker processes, 3 simulated agents, its own PostgreSQL and
// Redis): after each, nothing lost, nothing stuck, nothing bound twice, no node over-committed
// (in the clusters or in the books), no gang left partly running, no queue above its limit, no
// pod held RUNNING that its cluster does not run, no pod run by a cluster that the books do not
// hold there. The faults run one after another on the same topology, which must come back from
// each before the next: each test starts from a settled system, so one fault's damage is charged
// to that fault.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Checker } from "../helpers/topology/checks.js";
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
});
