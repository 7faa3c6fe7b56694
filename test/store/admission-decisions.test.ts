// Admission's bulk assignment: each job once, only while PENDING without a cluster, with its
// event; a cluster that does not exist refuses the whole batch and writes nothing.
import { afterAll, beforeAll, expect, it } from "vitest";
import { assignJobClusters } from "../../src/store/operations/admission-decisions.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { eventsOfJobs, jobsById, MAX_EVENTS_PAGE } from "../../src/store/index.js";
import type { TestStore } from "../helpers/store.js";
import { admin, job, jobOf, storeWithC1 } from "./fixtures.js";

let t: TestStore;
beforeAll(async () => {
  t = await storeWithC1();
});
afterAll(async () => t?.close());

const ADMISSION = { name: "admission" };

it("assigns each job once, with its event, and refuses a batch naming a missing cluster", async () => {
  const a = (await submitJob(t.store, admin, job({ name: "a" }))).job.id;
  const b = (await submitJob(t.store, admin, job({ name: "b" }))).job.id;

  await expect(
    assignJobClusters(t.store, ADMISSION, [
      { job: a, cluster: "c1" },
      { job: b, cluster: "nowhere" },
    ]),
  ).rejects.toThrow(/cluster "nowhere" does not exist/);
  const untouched = await jobsById(t.store, [a, b]);
  expect(untouched.map((j) => j.clusterName)).toEqual([null, null]);

  expect(
    await assignJobClusters(t.store, ADMISSION, [{ job: a, cluster: "c1", message: "the gang fits now" }]),
  ).toEqual([a]);
  // A second admitter racing for the same job changes nothing.
  expect(await assignJobClusters(t.store, ADMISSION, [{ job: a, cluster: "c1" }])).toEqual([]);
  const j = await jobOf(t, a);
  expect(j.clusterName).toBe("c1");
  expect((j.pendingReason as { message: string }).message).toBe("waiting for the scheduler on cluster c1");
  const events = (await eventsOfJobs(t.store, [a], MAX_EVENTS_PAGE))
    .get(a)!
    .filter((e) => e.kind === "job.assigned");
  expect(events.map((e) => [e.message, e.actor, e.cluster, e.queue])).toEqual([
    ["job a assigned to cluster c1: the gang fits now", "admission", "c1", "team-a"],
  ]);
});
