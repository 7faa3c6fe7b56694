// Which agent reports move a cluster's fencing generation: a pod confirmed RUNNING where the
// scheduler bound it does not (it changes nothing a session decides on); a pod that finishes
// or leaves its node does.
import { afterAll, beforeAll, expect, it } from "vitest";
import { reportPodStatus } from "../../src/store/operations/report-pods.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { runCycle } from "../helpers/cycle.js";
import type { TestStore } from "../helpers/store.js";
import { admin, agentOfC1, generationOfC1, job, jobOf, podsOf, storeWithC1 } from "./fixtures.js";

const agent = agentOfC1;
let t: TestStore;

beforeAll(async () => {
  t = await storeWithC1();
});
afterAll(async () => t?.close());

const generation = () => generationOfC1(t);

it("a RUNNING confirmation of a bound pod leaves the generation; a pod ending moves it", async () => {
  const { job: j } = await submitJob(t.store, admin, job({ cluster: "c1" }));
  await runCycle(t.store, "c1");
  const g = await generation();
  const pods = await podsOf(t, j.id);
  expect(pods.map((p) => p.state)).toEqual(["BINDING", "BINDING"]);

  const updates = pods.map((p) => ({ job: j.id, pod: p.name, state: "RUNNING" as const }));
  expect(await reportPodStatus(t.store, agent, { cluster: "c1", updates })).toBe(2);
  expect(await generation()).toBe(g);
  expect((await jobOf(t, j.id)).state).toBe("RUNNING");

  await reportPodStatus(t.store, agent, {
    cluster: "c1",
    updates: [{ job: j.id, pod: pods[0]!.name, state: "SUCCEEDED" }],
  });
  expect(await generation()).toBe(g + 1);
});
