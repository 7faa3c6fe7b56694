// reportPodInventory: a page of the cluster's complete pod set fails exactly the held pods of
// its key range that it does not list, leaves pods with a BindRequest in flight to that
// request, and refuses a page that lists pods outside its range.
import { afterAll, beforeAll, expect, it } from "vitest";
import { reportPodInventory } from "../../src/store/operations/reconcile-pods.js";
import { reportBindResult, reportPodStatus } from "../../src/store/operations/report-pods.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { runCycle } from "../helpers/cycle.js";
import { bindRequestsOfCluster, MAX_BIND_REQUESTS_PAGE } from "../../src/store/index.js";
import type { TestStore } from "../helpers/store.js";
import { admin, agentOfC1, generationOfC1, job, podsOf, storeWithC1 } from "./fixtures.js";

const agent = agentOfC1;
let t: TestStore;

beforeAll(async () => {
  t = await storeWithC1();
});
afterAll(async () => t?.close());

const pods = async (jobId: string) =>
  (await podsOf(t, jobId)).map(({ name, state, message }) => ({ name, state, message }));
const generation = () => generationOfC1(t);

it("fails the held pods of the page's range it does not list, once their binds are done", async () => {
  const a = (await submitJob(t.store, admin, job({ cluster: "c1", name: "a" }))).job.id;
  const b = (await submitJob(t.store, admin, job({ cluster: "c1", name: "b" }))).job.id;
  await runCycle(t.store, "c1");
  // Binds in flight: the pods may not exist yet; nothing is failed.
  expect(await reportPodInventory(t.store, agent, { cluster: "c1", pods: [] })).toBe(0);

  const requests = await bindRequestsOfCluster(t.store, "c1", null, MAX_BIND_REQUESTS_PAGE);
  await reportBindResult(t.store, agent, {
    cluster: "c1",
    results: requests.map((r) => ({ bindRequest: r.id, ok: true })),
  });
  for (const id of [a, b]) {
    const updates = (await pods(id)).map((p) => ({ job: id, pod: p.name, state: "RUNNING" as const }));
    await reportPodStatus(t.store, agent, { cluster: "c1", updates });
  }
  const [first, second] = [a, b].sort();
  const page = { job: first!, pod: "worker-1" };

  // A page listing a pod outside its range is refused and changes nothing.
  await expect(
    reportPodInventory(t.store, agent, {
      cluster: "c1",
      pods: [{ job: second!, pod: "worker-0" }],
      through: page,
    }),
  ).rejects.toThrow(/outside the page's range/);

  // The first page (up to the first job's last pod) lists only worker-0: worker-1 vanished.
  const g = await generation();
  expect(
    await reportPodInventory(t.store, agent, {
      cluster: "c1",
      pods: [{ job: first!, pod: "worker-0" }],
      through: page,
    }),
  ).toBe(1);
  expect(await generation()).toBe(g + 1);
  expect(await pods(first!)).toEqual([
    { name: "worker-0", state: "RUNNING", message: null },
    { name: "worker-1", state: "FAILED", message: "pod vanished from cluster c1" },
  ]);
  // The last page lists the second job's pods: nothing of it vanished.
  const last = [0, 1].map((i) => ({ job: second!, pod: `worker-${i}` }));
  expect(await reportPodInventory(t.store, agent, { cluster: "c1", pods: last, after: page })).toBe(0);
  expect((await pods(second!)).map((p) => p.state)).toEqual(["RUNNING", "RUNNING"]);
  expect(await generation()).toBe(g + 1);
});
