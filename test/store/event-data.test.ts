// An event's data: written with it, published with it, read back with it (Job.events); null for
// an event recorded without.
import { afterAll, beforeAll, expect, it } from "vitest";
import type { CycleEventData } from "../../src/store/index.js";
import { recordEvents } from "../../src/store/operations/record-events.js";
import { createQueue } from "../../src/store/operations/queues.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { eventsOfJobs } from "../../src/store/queries/job-details.js";
import { eventually, openTestStore, type TestStore } from "../helpers/store.js";
import { admin, job } from "./fixtures.js";

let t: TestStore;

beforeAll(async () => {
  t = await openTestStore();
  await createQueue(t.store, admin, { name: "team-a" });
});
afterAll(async () => t?.close());

it("round-trips an event's data through the table and the bus", async () => {
  const { id } = (await submitJob(t.store, admin, job())).job;
  const data: CycleEventData = {
    worker: "host:42",
    startedAt: "2026-12-05T10:00:00.000Z",
    endedAt: "2026-12-05T10:00:00.012Z",
    timings: { loadMs: 4, sessionMs: 6, commitMs: 1, dispatchMs: 1 },
  };
  await recordEvents(t.store, { name: "scheduler" }, [
    { kind: "test.with-data", message: "with", job: id, data },
    { kind: "test.without-data", message: "without", job: id },
  ]);

  const read = (await eventsOfJobs(t.store, [id], 100)).get(id) ?? [];
  expect(read.find((e) => e.kind === "test.with-data")?.data).toEqual(data);
  expect(read.find((e) => e.kind === "test.without-data")?.data).toBeNull();
  // Events written by a statement of their own (the submission's) have none.
  expect(read.find((e) => e.kind === "job.submitted")?.data).toBeNull();

  const published = await eventually(() => t.published.find((e) => e.kind === "test.with-data"));
  expect(published.data).toEqual(data);
  expect(published.message).toBe("with");
});
