// A queue's policy holds when its jobs are admitted, not only when they were submitted: a queue
// tightened after a submit refuses its pending jobs' templates at admission. The job ends FAILED,
// its pods FAILED, with a job.failed event naming the queue, the field and the rule; the jobs
// that still pass are admitted as before. Real PostgreSQL, the real admission pass.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assignJobClusters } from "../../src/store/operations/admission-decisions.js";
import { createQueue, updateQueue } from "../../src/store/operations/queues.js";
import { reassignJobCluster } from "../../src/store/operations/reassign-job.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { eventsOfJobs, MAX_EVENTS_PAGE } from "../../src/store/index.js";
import { openTestStore, type TestStore } from "../helpers/store.js";
import { addGpuCluster, admin, job, jobOf, podsOf } from "../store/fixtures.js";
import { admissionPass } from "../workers/admission-pass.js";

let t: TestStore;

const restricted = {
  spec: {
    securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
    containers: [
      {
        name: "main",
        image: "x",
        securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
      },
    ],
  },
};
const baseline = { spec: { containers: [{ name: "main", image: "x" }] } };
const withTemplate = (name: string, template: unknown, namespace = "default") =>
  job({
    name,
    namespace,
    tasks: [{ name: "worker", replicas: 2, resources: { cpu: 1000, memory: "1Gi", gpu: 1 }, template }],
  });

beforeAll(async () => {
  t = await openTestStore();
  await createQueue(t.store, admin, { name: "team-a", namespaces: ["default", "ml"] });
  await addGpuCluster(t.store, "c1");
});
afterAll(async () => t?.close());

const stateOf = async (id: string) => {
  const { state, clusterName } = await jobOf(t, id);
  return {
    state,
    clusterName,
    pods: (await podsOf(t, id)).map(({ state, message }) => ({ state, message })),
  };
};
const eventsOf = async (ids: string[], kind: string) =>
  [...(await eventsOfJobs(t.store, ids, MAX_EVENTS_PAGE)).values()].flat().filter((e) => e.kind === kind);

describe("the queue's policy at admission", () => {
  it("refuses the pending jobs a tightened queue no longer allows, and admits the others", async () => {
    const loose = (await submitJob(t.store, admin, withTemplate("loose", baseline))).job.id;
    const elsewhere = (await submitJob(t.store, admin, withTemplate("elsewhere", restricted, "ml"))).job.id;
    const fine = (await submitJob(t.store, admin, withTemplate("fine", restricted))).job.id;
    await updateQueue(t.store, admin, { name: "team-a", podSecurity: "RESTRICTED", namespaces: ["default"] });

    const r = await admissionPass(t.store);
    expect(r.assigned.map((d) => d.job)).toEqual([fine]);
    expect(await stateOf(fine)).toMatchObject({ state: "PENDING", clusterName: "c1" });

    for (const id of [loose, elsewhere]) {
      const s = await stateOf(id);
      expect(s.state).toBe("FAILED");
      expect(s.clusterName).toBeNull();
      expect(s.pods.map((p) => p.state)).toEqual(["FAILED", "FAILED"]);
      expect(s.pods[0]!.message).toMatch(/queue team-a/);
    }
    const events = await eventsOf([loose, elsewhere], "job.failed");
    const byJob = new Map(events.map((e) => [e.job, e.message]));
    expect(byJob.get(loose)).toMatch(/queue team-a/);
    expect(byJob.get(loose)).toMatch(/tasks\[0\]\.template\.spec\.containers\[0\]\.securityContext/);
    expect(byJob.get(loose)).toMatch(/RESTRICTED/);
    expect(byJob.get(elsewhere)).toMatch(/queue team-a/);
    expect(byJob.get(elsewhere)).toMatch(/namespace: namespace "ml" is not allowed/);
    // Nothing left to decide: a refused job is not looked at again.
    expect((await admissionPass(t.store)).considered).toBe(0);
  });

  it("holds a job moved to another cluster to its queue's policy as it is then", async () => {
    await createQueue(t.store, admin, { name: "team-b", namespaces: ["default"] });
    await addGpuCluster(t.store, "c2");
    const moved = (await submitJob(t.store, admin, { ...withTemplate("moved", baseline), queue: "team-b" }))
      .job.id;
    expect(await assignJobClusters(t.store, admin, [{ job: moved, cluster: "c1" }])).toEqual([moved]);
    await updateQueue(t.store, admin, { name: "team-b", podSecurity: "RESTRICTED" });

    expect(await reassignJobCluster(t.store, admin, { job: moved, from: "c1", to: "c2" })).toBe(false);
    const s = await stateOf(moved);
    expect(s).toMatchObject({ state: "FAILED", clusterName: "c1" });
    expect(s.pods.map((p) => p.state)).toEqual(["FAILED", "FAILED"]);
    const [failed] = await eventsOf([moved], "job.failed");
    expect(failed!.message).toMatch(/queue team-b's policy no longer allows it/);
    expect(failed!.message).toMatch(/RESTRICTED/);
    expect(await eventsOf([moved], "job.reassigned")).toEqual([]);
  });
});
