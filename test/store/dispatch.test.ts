// The outbox's messages, field by field, for a bind and an eviction, in the order asked for; a
// workload's binds name its kind, and its cancel is one deletion of its object.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bindRequestMessages, markBindRequestsDispatched } from "../../src/store/operations/dispatch.js";
import { cancelJob } from "../../src/store/operations/jobs.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { submitWorkload } from "../../src/store/operations/submit-workload.js";
import { runCycle } from "../helpers/cycle.js";
import type { TestStore } from "../helpers/store.js";
import { admin, job, podsOf, storeWithC1 } from "./fixtures.js";

let t: TestStore;

beforeAll(async () => {
  t = await storeWithC1();
});
afterAll(async () => t?.close());

describe("bindRequestMessages", () => {
  it("builds each message from its request, job, pod and task, in the order of the ids", async () => {
    const template = { spec: { containers: [{ name: "main", image: "trainer:1" }] } };
    const { job: j } = await submitJob(
      t.store,
      admin,
      job({
        name: "msg",
        cluster: "c1",
        tasks: [
          {
            name: "worker",
            replicas: 2,
            resources: { cpu: 1500, memory: "2Gi", gpu: 1 },
            template,
            durationSeconds: 30,
          },
        ],
      }),
    );
    const { bindRequests, generation } = await runCycle(t.store, "c1");
    expect(bindRequests).toHaveLength(2);
    await markBindRequestsDispatched(t.store, [bindRequests[1]!.id]);
    const ids = [bindRequests[1]!.id, "00000000-0000-7000-8000-000000000000", bindRequests[0]!.id];
    const messages = await bindRequestMessages(t.store, ids);
    const pods = await podsOf(t, j.id);
    const expected = (i: number, attempt: number) => ({
      id: bindRequests[i]!.id,
      kind: "bind",
      cluster: "c1",
      generation,
      job: {
        id: j.id,
        name: "msg",
        namespace: "fleetq-team-a", // its top queue's own namespace
        queue: "team-a",
        createdInCluster: false,
        restarts: 0,
        workload: null,
      },
      pod: {
        name: bindRequests[i]!.podId === pods[0]!.id ? "worker-0" : "worker-1",
        task: "worker",
        resources: { cpuMillis: 1500, memory: 2 * 2 ** 30, gpus: 1, gpuFraction: 0, gpuMemory: 0 },
        durationSeconds: 30,
        exitFailure: false,
      },
      node: "n1",
      gpuGroups: [],
      gpuDevices: bindRequests[i]!.gpuDevices,
      reason: "allocate",
      attempt,
    });
    expect(messages).toEqual([expected(1, 2), expected(0, 1)]);

    const { bindRequests: evictions } = await cancelJob(t.store, admin, { id: j.id });
    const [evict] = await bindRequestMessages(t.store, [evictions[0]!.id]);
    expect(evict).toMatchObject({ kind: "evict", reason: "job cancelled by test-admin", attempt: 1 });
  });

  it("names a workload's kind in its binds; its cancel is one deletion of the object, about no node", async () => {
    const { job: w } = await submitWorkload(t.store, admin, {
      queue: "team-a",
      cluster: "c1",
      manifest: {
        apiVersion: "batch/v1",
        kind: "Job",
        metadata: { name: "wl" },
        spec: { parallelism: 2, template: { spec: { containers: [{ name: "main", image: "x" }] } } },
      },
    });
    const { bindRequests } = await runCycle(t.store, "c1");
    const binds = await bindRequestMessages(
      t.store,
      bindRequests.filter((b) => b.jobId === w.id).map((b) => b.id),
    );
    expect(binds.map((m) => [m.kind, m.job.workload])).toEqual([
      ["bind", "Job"],
      ["bind", "Job"],
    ]);
    const { bindRequests: stops } = await cancelJob(t.store, admin, { id: w.id });
    const messages = await bindRequestMessages(
      t.store,
      stops.map((b) => b.id),
    );
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({ kind: "delete", node: "", job: { id: w.id, workload: "Job" } });
  });
});
