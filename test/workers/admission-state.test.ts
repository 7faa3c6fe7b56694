// Admission with the state a worker keeps between passes: a pass with nothing it could decide
// differently does nothing, a new job is decided on its own, and a cluster change that makes room
// brings back the jobs that fitted nowhere.
import { afterAll, beforeAll, expect, it } from "vitest";
import { registerCluster } from "../../src/store/operations/clusters.js";
import { createQueue } from "../../src/store/operations/queues.js";
import { reportNodes } from "../../src/store/operations/report-nodes.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { AdmissionState, fullReads } from "../../workers/index.js";
import { admissionPass } from "./admission-pass.js";
import { openTestStore, type TestStore } from "../helpers/store.js";
import { admin, gpuNode, job } from "../store/fixtures.js";

let t: TestStore;
let state: AdmissionState;

const admission = () => admissionPass(t.store, { state });

const gpus = (name: string, replicas: number, gpu: number) =>
  job({ name, tasks: [{ name: "w", replicas, resources: { cpu: 1000, memory: "1Gi", gpu } }] });

beforeAll(async () => {
  t = await openTestStore();
  state = new AdmissionState(fullReads(t.store));
  await createQueue(t.store, admin, { name: "team-a" });
  await registerCluster(t.store, admin, { name: "alpha" });
  await reportNodes(
    t.store,
    { name: "agent:alpha" },
    { cluster: "alpha", complete: true, nodes: [gpuNode("n1", 8)] },
  );
});
afterAll(async () => t?.close());

it("skips a pass with nothing new, decides a new job alone, and looks again when room comes", async () => {
  const huge = (await submitJob(t.store, admin, gpus("huge", 2, 8))).job.id;
  expect((await admission()).unplaced).toBe(1);
  expect((await admission()).skipped).toBe(true);

  const small = (await submitJob(t.store, admin, gpus("small", 1, 2))).job.id;
  const r = await admission();
  expect(r.considered).toBe(1);
  expect(r.assigned.map((d) => d.job)).toEqual([small]);
  expect((await admission()).skipped).toBe(true);

  // A second node: the huge gang fits now.
  await reportNodes(
    t.store,
    { name: "agent:alpha" },
    { cluster: "alpha", complete: true, nodes: [gpuNode("n1", 8), gpuNode("n2", 8), gpuNode("n3", 8)] },
  );
  const after = await admission();
  expect(after.assigned.map((d) => [d.job, d.tier])).toEqual([[huge, 2]]);
});
