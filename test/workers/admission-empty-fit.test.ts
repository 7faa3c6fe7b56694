// The empty-cluster fit check (can this gang ever fit here?) is one dry run per job shape and
// cluster, whatever the number of queues the jobs come from, unless a queue's limit can refuse it.
import { afterAll, beforeAll, expect, it } from "vitest";
import { createQueue, setQueueQuota } from "../../src/store/operations/queues.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { admissionPass } from "./admission-pass.js";
import { metrics } from "../../workers/metrics.js";
import { sql } from "../helpers/db.js";
import { openTestStore, type TestStore } from "../helpers/store.js";
import { addGpuCluster, admin, job, jobOf } from "../store/fixtures.js";

let t: TestStore;

const admission = () => admissionPass(t.store);

const emptyRuns = async () =>
  (await metrics.getSingleMetric("fleetq_admission_dry_runs_total")!.get()).values.find(
    (v) => v.labels.kind === "empty",
  )?.value ?? 0;

const QUEUES = 12;

beforeAll(async () => {
  t = await openTestStore();
  for (let i = 0; i < QUEUES; i++) await createQueue(t.store, admin, { name: `q${i}` });
  for (const name of ["alpha", "beta"]) {
    await addGpuCluster(t.store, name);
  }
});
afterAll(async () => t?.close());

const huge = (queue: string) =>
  job({
    name: `huge-${queue}`,
    queue,
    tasks: [{ name: "w", replicas: 2, resources: { cpu: 1000, memory: "1Gi", gpu: 8 } }],
  });

it("checks one shape on empty nodes once per cluster over many queues", async () => {
  // A gang of 16 GPUs never fits a cluster of 8, from every queue.
  for (let i = 0; i < QUEUES; i++) await submitJob(t.store, admin, huge(`q${i}`));
  const before = await emptyRuns();
  const r = await admission();
  expect(r.unplaced).toBe(QUEUES);
  expect((await emptyRuns()) - before).toBe(2);
});

it("checks a queue whose limit can refuse the job on its own, with its own reason", async () => {
  await createQueue(t.store, admin, { name: "capped" });
  await setQueueQuota(t.store, admin, { queue: "capped", resource: "GPU", deserved: 0, limit: 4 });
  // The same shape as the jobs above, whose empty-cluster answer is cached already.
  await submitJob(t.store, admin, { ...huge("capped"), name: "capped-job" });
  await admission();
  const [capped] = await sql<{ id: string }>(
    t.testDb.url,
    "SELECT id::text FROM job WHERE name = 'capped-job'",
  );
  const j = await jobOf(t, capped!.id);
  expect(j.clusterName).toBeNull();
  const reason = j.pendingReason as { clusters: { cluster: string; message: string }[] };
  for (const c of reason.clusters)
    expect(c.message).toMatch(/can never fit here: .*capped quota has reached/);
});
