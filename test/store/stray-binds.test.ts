// A bind the agent carries out after the books took the pod off that node (an eviction or a
// cancel overtook it: the agent ran the requests in the other order, e.g. after a restart) leaves
// a pod running in the cluster that the books do not hold. Its result brings an EVICT request.
import { afterAll, beforeAll, expect, it } from "vitest";
import { cancelJob } from "../../src/store/operations/jobs.js";
import { reportBindResult } from "../../src/store/operations/report-pods.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { runCycle } from "../helpers/cycle.js";
import { eventsOfJobs, MAX_EVENTS_PAGE } from "../../src/store/index.js";
import type { TestStore } from "../helpers/store.js";
import { admin, agentOfC1, bindRequestsOf, generationOfC1, job, podsOf, storeWithC1 } from "./fixtures.js";

let t: TestStore;

beforeAll(async () => {
  t = await storeWithC1();
});
afterAll(async () => t?.close());

const requestsOf = (jobId: string) => bindRequestsOf(t, jobId);

async function placed(name: string): Promise<string> {
  const { job: j } = await submitJob(
    t.store,
    admin,
    job({
      name,
      cluster: "c1",
      tasks: [{ name: "w", replicas: 1, resources: { cpu: 1000, memory: "1Gi", gpu: 1 } }],
    }),
  );
  await runCycle(t.store, "c1");
  expect((await requestsOf(j.id)).map((r) => [r.kind, r.state])).toEqual([["BIND", "PENDING"]]);
  return j.id;
}

const result = (bindRequest: string) => ({ cluster: "c1", results: [{ bindRequest, ok: true }] });

it("a bind carried out after its pod was stopped is evicted again", async () => {
  const id = await placed("overtaken");
  const [bind] = await requestsOf(id);
  await cancelJob(t.store, admin, { id });
  const [, evict] = await requestsOf(id);
  expect(evict!.kind).toBe("EVICT");
  // The eviction runs first (nothing there yet), then the bind: the pod now runs on n1.
  await reportBindResult(t.store, agentOfC1, result(evict!.id));
  expect((await podsOf(t, id))[0]!.state).toBe("FAILED");
  await reportBindResult(t.store, agentOfC1, result(bind!.id));

  const after = await requestsOf(id);
  expect(after.map((r) => [r.kind, r.state, r.nodeName])).toEqual([
    ["BIND", "SUCCEEDED", bind!.nodeName],
    ["EVICT", "SUCCEEDED", bind!.nodeName],
    ["EVICT", "PENDING", bind!.nodeName],
  ]);
  expect(Number(after[2]!.generation)).toBe(await generationOfC1(t));
  const [pod] = await podsOf(t, id);
  expect([pod!.state, pod!.nodeName]).toEqual(["FAILED", null]);
  const events = (await eventsOfJobs(t.store, [id], MAX_EVENTS_PAGE))
    .get(id)!
    .filter((e) => e.kind === "bind.result");
  expect(events.at(-1)!.message).toContain(`after the pod was taken off ${bind!.nodeName}: evicting it`);

  // Its result, and the same bind result again, change nothing more.
  await reportBindResult(t.store, agentOfC1, result(after[2]!.id));
  await reportBindResult(t.store, agentOfC1, result(bind!.id));
  expect((await requestsOf(id)).map((r) => [r.kind, r.state])).toEqual([
    ["BIND", "SUCCEEDED"],
    ["EVICT", "SUCCEEDED"],
    ["EVICT", "SUCCEEDED"],
  ]);
});

it("a bind of a pod the books hold there, or are evicting from there, brings no eviction", async () => {
  const bound = await placed("bound");
  const [bind] = await requestsOf(bound);
  await reportBindResult(t.store, agentOfC1, result(bind!.id));
  expect((await requestsOf(bound)).map((r) => r.kind)).toEqual(["BIND"]);

  const releasing = await placed("releasing");
  const [bind2] = await requestsOf(releasing);
  await cancelJob(t.store, admin, { id: releasing });
  await reportBindResult(t.store, agentOfC1, result(bind2!.id));
  expect((await requestsOf(releasing)).map((r) => [r.kind, r.state])).toEqual([
    ["BIND", "SUCCEEDED"],
    ["EVICT", "PENDING"],
  ]);
});
