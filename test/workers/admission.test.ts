// Admission passes on their own, against real PostgreSQL and the real core: the documented
// order (tier, score, then the cluster's name), spreading as clusters fill, and a head of jobs
// that fit nowhere not hiding the jobs behind it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createQueue } from "../../src/store/operations/queues.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { admissionPass } from "./admission-pass.js";
import { openTestStore, type TestStore } from "../helpers/store.js";
import { addGpuCluster, admin, job, jobOf } from "../store/fixtures.js";

let t: TestStore;

const admission = (batch = 1000) => admissionPass(t.store, { batch });

const gpus = (name: string, replicas: number, gpu: number) =>
  job({ name, tasks: [{ name: "w", replicas, resources: { cpu: 1000, memory: "1Gi", gpu } }] });

const clusterOf = async (id: string) => (await jobOf(t, id)).clusterName;

beforeAll(async () => {
  t = await openTestStore();
  await createQueue(t.store, admin, { name: "team-a" });
  // Two identical clusters; their names decide ties.
  for (const name of ["beta", "alpha"]) {
    await addGpuCluster(t.store, name);
  }
});
afterAll(async () => t?.close());

describe("admission", () => {
  it("breaks a tie by cluster name, then spreads as the first cluster fills", async () => {
    const first = (await submitJob(t.store, admin, gpus("first", 1, 4))).job.id;
    const second = (await submitJob(t.store, admin, gpus("second", 1, 4))).job.id;
    const r = await admission();
    expect(r.assigned.map((d) => [d.job, d.cluster, d.tier])).toEqual([
      [first, "alpha", 2],
      [second, "beta", 2],
    ]);
    expect(await clusterOf(first)).toBe("alpha");
    expect(await clusterOf(second)).toBe("beta");
    // Nothing left to decide: a second pass changes nothing.
    expect((await admission()).considered).toBe(0);
  });

  it("looks past jobs that fit nowhere to the ones behind them", async () => {
    const stuck: string[] = [];
    for (let i = 0; i < 3; i++)
      stuck.push((await submitJob(t.store, admin, gpus(`huge-${i}`, 1, 16))).job.id);
    const small = (await submitJob(t.store, admin, gpus("small", 1, 2))).job.id;
    const r = await admission(2); // chunks of two jobs: the small one is in the second chunk
    expect(r.assigned.map((d) => d.job)).toEqual([small]);
    expect(r.unplaced).toBe(3);
    for (const id of stuck) {
      const j = await jobOf(t, id);
      expect(j.clusterName).toBeNull();
      const reason = j.pendingReason as {
        message: string;
        clusters: { cluster: string; short: unknown[] }[];
      };
      expect(reason.message).toBe("no cluster can run the gang now (2 considered)");
      expect(reason.clusters.map((c) => c.cluster)).toEqual(["alpha", "beta"]);
      expect(reason.clusters.every((c) => c.short.length > 0)).toBe(true);
    }
  });
});
