// A backlog larger than the fleet, admitted over several passes with no cycle in between (the
// jobs sent to a cluster stay unplaced there): a job is sent as fitting now only while the room
// left by the jobs already sent holds it, in any pass.
import { afterEach, expect, it } from "vitest";
import { ClusterCache } from "../../src/store/index.js";
import { createQueue } from "../../src/store/operations/queues.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { type AdmissionReport, AdmissionState } from "../../workers/index.js";
import { admissionPass } from "./admission-pass.js";
import { openTestStore, type TestStore } from "../helpers/store.js";
import { addGpuCluster, admin, job } from "../store/fixtures.js";

let t: TestStore;

async function fleet(): Promise<void> {
  t = await openTestStore();
  for (const q of ["team-a", "team-b"]) await createQueue(t.store, admin, { name: q });
  // Room for four gangs of 4 GPUs: two clusters of one 8-GPU node.
  for (const name of ["alpha", "beta"]) {
    await addGpuCluster(t.store, name);
  }
}
afterEach(async () => t?.close());

// Each pass from nothing, and passes of one worker that keeps its state and cluster cache.
it.each([
  ["each pass reading every cluster", false],
  ["passes keeping bases on a cluster cache", true],
])("never sends a job as fitting now beyond the room the jobs already sent leave (%s)", async (_, kept) => {
  await fleet();
  const state = kept ? new AdmissionState(new ClusterCache(t.store)) : undefined;
  const admission = () => admissionPass(t.store, { state });
  for (let i = 0; i < 10; i++)
    await submitJob(
      t.store,
      admin,
      job({
        name: `gang-${i}`,
        queue: i % 2 ? "team-b" : "team-a",
        tasks: [{ name: "w", replicas: 2, resources: { cpu: 1000, memory: "1Gi", gpu: 2 } }],
      }),
    );
  const fitNow: AdmissionReport["assigned"] = [];
  for (let pass = 0; pass < 3; pass++) {
    const r = await admission();
    fitNow.push(...r.assigned.filter((d) => d.tier === 2));
  }
  // Each cluster holds two gangs of 4 GPUs; nothing was placed by a cycle in between.
  const perCluster = new Map<string, number>();
  for (const d of fitNow) perCluster.set(d.cluster, (perCluster.get(d.cluster) ?? 0) + 1);
  expect(Object.fromEntries(perCluster)).toEqual({ alpha: 2, beta: 2 });
  for (const d of fitNow) expect(d.message).not.toMatch(/score -/);
});
