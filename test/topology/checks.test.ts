// The fault run's checks (test/helpers/topology/checks.ts) on hand-made cluster states and
// books: a pod evicted and started on another node while the books were being read is not a
// pod bound twice; a pod running on one node for all that time while the books hold it RUNNING
// on another is.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type StoredPod, writeClusterState } from "../../src/agent/backends/simulated/state-file.js";
import { Checker } from "../helpers/topology/checks.js";
import { FAULT_CLUSTERS, type Topology } from "../helpers/topology/topology.js";
import { bindRequest } from "../agent/bind-requests.js";

const JOB = "00000000-0000-4000-8000-000000000001";
let dir: string;
let stateFile: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "fleetq-checks-"));
  stateFile = path.join(dir, "west.json");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function runsOn(node: string, startedAt: number): StoredPod {
  return {
    request: bindRequest({ id: `r-${startedAt}`, cluster: "west", jobId: JOB, pod: "w-0", node, gpus: 1 }),
    startedAt,
  };
}

const booksRow = (node: string) => ({
  job: JOB,
  pod: "w-0",
  state: "RUNNING",
  cluster: "west",
  node,
  queue: "team-a",
  min_left: 1,
  cpu_millis: 1000,
  memory: String(2 ** 30),
  gpus: 1,
  gpu_fraction: 0,
  gpu_memory: 0,
  gpu_groups: [],
  gpu_devices: [],
});

/** A checker over the west cluster whose books are `read` (called while they are read). */
function checker(read: () => ReturnType<typeof booksRow>[]): Checker {
  const topology = {
    clusters: FAULT_CLUSTERS.filter((c) => c.name === "west"),
    agents: new Map([["west", { stateFile }]]),
    databaseUrl: "",
  } as unknown as Topology;
  const c = new Checker(topology);
  c.dbPods = async () => read() as Awaited<ReturnType<Checker["dbPods"]>>;
  return c;
}

it("a pod moved to another node while the books were read is not bound twice", async () => {
  writeClusterState(stateFile, [runsOn("h100-0", 1000)]);
  // The books say RUNNING on h100-0 as of their read; meanwhile the pod was evicted there and
  // started on h100-1.
  const c = checker(() => {
    writeClusterState(stateFile, [runsOn("h100-1", 2000)]);
    return [booksRow("h100-0")];
  });
  await c.sample();
  expect([...c.take().podsBoundTwice]).toEqual([]);
});

it("a pod running on one node all along while the books hold it RUNNING on another is bound twice", async () => {
  writeClusterState(stateFile, [runsOn("h100-1", 1000)]);
  const c = checker(() => [booksRow("h100-0")]);
  await c.sample();
  expect([...c.take().podsBoundTwice]).toEqual([`${JOB}/w-0`]);
});
