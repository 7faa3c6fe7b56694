// A gang whose pods ended differently: some finished (SUCCEEDED) while the others were taken off
// their nodes (evicted by a consolidation or reclaim whose eviction came after those pods had
// finished, or lost with a node). The finished pods count toward the gang's minimum — the job's
// state counts them so — and the pods left are placed on their own, not held to a minimum only
// all of the pods together could meet, which would keep the job PENDING for good.
import { afterAll, beforeAll, expect, it } from "vitest";
import { reportPodStatus } from "../../src/store/operations/report-pods.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { runCycle } from "../helpers/cycle.js";
import type { TestStore } from "../helpers/store.js";
import { admin, agentOfC1, job, jobOf, podsOf, storeWithC1 } from "./fixtures.js";

let t: TestStore;

beforeAll(async () => {
  t = await storeWithC1();
});
afterAll(async () => t?.close());

const podStates = async (id: string) => (await podsOf(t, id)).map((p) => [p.name, p.state]);
const stateOf = async (id: string) => (await jobOf(t, id)).state;

it("places the pods a gang has left once some of its pods finished and the others were evicted", async () => {
  const { job: j } = await submitJob(
    t.store,
    admin,
    job({
      name: "gang",
      cluster: "c1",
      tasks: [{ name: "w", replicas: 4, resources: { cpu: 1000, memory: "1Gi", gpu: 1 } }],
    }),
  );
  await runCycle(t.store, "c1");
  const all = ["w-0", "w-1", "w-2", "w-3"];
  await reportPodStatus(t.store, agentOfC1, {
    cluster: "c1",
    updates: all.map((pod) => ({ job: j.id, pod, state: "RUNNING" as const })),
  });
  expect(await stateOf(j.id)).toBe("RUNNING");

  // Two pods finish, the two others are taken off their node.
  await reportPodStatus(t.store, agentOfC1, {
    cluster: "c1",
    updates: [
      { job: j.id, pod: "w-0", state: "SUCCEEDED" },
      { job: j.id, pod: "w-1", state: "SUCCEEDED" },
      { job: j.id, pod: "w-2", state: "PENDING", message: "evicted" },
      { job: j.id, pod: "w-3", state: "PENDING", message: "evicted" },
    ],
  });
  expect(await stateOf(j.id)).toBe("PENDING");

  // The node has room for them: the next cycle places the two, and the job runs again.
  await runCycle(t.store, "c1");
  expect(await podStates(j.id)).toEqual([
    ["w-0", "SUCCEEDED"],
    ["w-1", "SUCCEEDED"],
    ["w-2", "BINDING"],
    ["w-3", "BINDING"],
  ]);
  expect(await stateOf(j.id)).toBe("ADMITTED");
  await reportPodStatus(t.store, agentOfC1, {
    cluster: "c1",
    updates: ["w-2", "w-3"].map((pod) => ({ job: j.id, pod, state: "RUNNING" as const })),
  });
  expect(await stateOf(j.id)).toBe("RUNNING");
  await reportPodStatus(t.store, agentOfC1, {
    cluster: "c1",
    updates: ["w-2", "w-3"].map((pod) => ({ job: j.id, pod, state: "SUCCEEDED" as const })),
  });
  expect(await stateOf(j.id)).toBe("SUCCEEDED");
});
