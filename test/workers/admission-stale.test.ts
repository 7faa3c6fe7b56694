// What admission keeps between passes (bases from its cluster cache, the jobs each base's dry runs
// built, the clusters one read tells unchanged) never outlives a change that can move a decision:
// a quota set on one cluster between two passes sends the next job there, while the other
// cluster's base is kept.
import { afterAll, beforeAll, expect, it } from "vitest";
import { ClusterCache } from "../../src/store/index.js";
import { registerCluster } from "../../src/store/operations/clusters.js";
import { createQueue, setQueueQuota } from "../../src/store/operations/queues.js";
import { reportNodes } from "../../src/store/operations/report-nodes.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { AdmissionState } from "../../workers/index.js";
import { openTestStore, type TestStore } from "../helpers/store.js";
import { admin, gpuNode, job } from "../store/fixtures.js";
import { admissionPass } from "./admission-pass.js";

let t: TestStore;

beforeAll(async () => {
  t = await openTestStore();
});
afterAll(async () => t?.close());

const gpus = (name: string, queue: string, replicas: number, gpu: number, cluster?: string) =>
  job({
    name,
    queue,
    cluster,
    tasks: [{ name: "w", replicas, resources: { cpu: 1000, memory: "1Gi", gpu } }],
  });

it("sends the next job where a quota set between two passes gives its queue more", async () => {
  for (const q of ["team-a", "team-b"]) await createQueue(t.store, admin, { name: q });
  for (const c of ["alpha", "beta"]) {
    await registerCluster(t.store, admin, { name: c });
    await reportNodes(
      t.store,
      { name: `agent:${c}` },
      { cluster: c, complete: true, nodes: [gpuNode(`${c}-n1`, 8)] },
    );
    // team-b waits on both clusters for more than they hold: the queues share each cluster.
    await submitJob(t.store, admin, gpus(`b-${c}`, "team-b", 4, 8, c));
  }
  const cache = new ClusterCache(t.store);
  const state = new AdmissionState(cache);

  // A first pass builds both bases (and dry-runs on them): its job fits nowhere.
  await submitJob(t.store, admin, gpus("never", "team-a", 1, 16));
  const first = await admissionPass(t.store, { state });
  expect(first.unplaced).toBe(1);
  const alpha = state.bases.get("alpha");
  const beta = state.bases.get("beta");

  // The same clusters but for a quota of team-a on beta: its share there doubles. Without it the
  // clusters tie and the name decides (alpha).
  await setQueueQuota(t.store, admin, { queue: "team-a", cluster: "beta", resource: "GPU", deserved: 8 });
  const next = (await submitJob(t.store, admin, gpus("next", "team-a", 1, 8))).job.id;
  const second = await admissionPass(t.store, { state });
  expect(second.assigned.map((d) => [d.job, d.cluster, d.tier])).toEqual([[next, "beta", 2]]);
  expect(state.bases.get("alpha")).toBe(alpha);
  expect(state.bases.get("beta")).not.toBe(beta);
});
