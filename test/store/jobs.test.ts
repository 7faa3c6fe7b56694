// submitJob / cancelJob / admission writes against real PostgreSQL.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConflictError, InvalidInputError, NotFoundError } from "../../src/store/errors.js";
import { registerCluster } from "../../src/store/operations/clusters.js";
import { assignJobCluster, cancelJob, setJobPendingReason } from "../../src/store/operations/jobs.js";
import { createQueue } from "../../src/store/operations/queues.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import type { SubmitJobInput } from "../../src/store/validation/submit-job.js";
import { tasksOf } from "../../src/store/index.js";
import { countRows, sql } from "../helpers/db.js";
import { openTestStore, type TestStore } from "../helpers/store.js";
import { admin, clusterOf, job, jobOf, podsOf } from "./fixtures.js";

let t: TestStore;
beforeAll(async () => {
  t = await openTestStore();
  await createQueue(t.store, admin, { name: "org" });
  await createQueue(t.store, admin, { name: "team-a", parent: "org" });
  await registerCluster(t.store, admin, { name: "c1" });
});
afterAll(async () => t?.close());

const counts = async () => ({
  jobs: await countRows(t.testDb.url, "job"),
  tasks: await countRows(t.testDb.url, "job_task"),
  pods: await countRows(t.testDb.url, "pod"),
  events: await countRows(t.testDb.url, "event"),
});

describe("submitJob", () => {
  it("writes the job, its task groups and one PENDING pod per replica, with defaults applied", async () => {
    const { job: row, created } = await submitJob(
      t.store,
      admin,
      job({
        tasks: [
          { name: "ps", replicas: 1, resources: { cpu: 500, memory: "512Mi" } },
          {
            name: "worker",
            replicas: 3,
            resources: { gpu: 0.5, memory: 1073741824 },
            nodeSelector: [{ key: "zone", values: ["a"] }],
            gpuModel: "A100",
            durationSeconds: 30,
          },
        ],
      }),
    );
    expect(created).toBe(true);
    expect(row).toMatchObject({
      name: "train",
      namespace: "fleetq-org", // its top queue's own namespace
      queueName: "team-a",
      clusterName: null,
      priority: 50,
      preemptible: true,
      minMember: 4,
      state: "PENDING",
    });
    expect(row.pendingReason).toEqual({ message: "waiting for admission to a cluster", clusters: [] });
    const pods = await podsOf(t, row.id);
    expect(pods.map((p) => [p.name, p.state, p.cpuMillis, Number(p.memory), p.gpus, p.gpuFraction])).toEqual([
      ["ps-0", "PENDING", 500, 512 * 2 ** 20, 0, 0],
      ["worker-0", "PENDING", 0, 2 ** 30, 0, 0.5],
      ["worker-1", "PENDING", 0, 2 ** 30, 0, 0.5],
      ["worker-2", "PENDING", 0, 2 ** 30, 0, 0.5],
    ]);
    const task = (await tasksOf(t.store, [row.id])).find((x) => x.name === "worker");
    expect(task).toMatchObject({
      replicas: 3,
      gpuModel: "A100",
      durationSeconds: 30,
      nodeSelector: [{ key: "zone", values: ["a"] }],
    });
  });

  it("priority >= 100 is non-preemptible unless told otherwise; a named cluster assigns it", async () => {
    const a = await submitJob(t.store, admin, job({ priority: 125, cluster: "c1" }));
    expect(a.job).toMatchObject({ preemptible: false, clusterName: "c1", requestedCluster: "c1" });
    expect(a.job.pendingReason).toEqual({ message: "waiting for the scheduler on cluster c1", clusters: [] });
    const b = await submitJob(t.store, admin, job({ priority: 125, preemptible: true }));
    expect(b.job.preemptible).toBe(true);
  });

  it("sub-groups: the job's gang minimum is the sum over leaf sub-groups", async () => {
    const { job: row } = await submitJob(
      t.store,
      admin,
      job({
        subGroups: [
          { name: "all", minMember: 1 },
          { name: "a", minMember: 2, parent: "all" },
          { name: "b", minMember: 1, parent: "all", topology: { required: "rack" } },
        ],
        tasks: [
          { name: "x", replicas: 2, resources: { gpu: 1 }, subGroup: "a" },
          { name: "y", replicas: 3, resources: { gpu: 1 }, subGroup: "b" },
        ],
      }),
    );
    expect(row.minMember).toBe(3);
    expect(row.subGroups).toEqual([
      { name: "all", minMember: 1, parent: null, topology: null },
      { name: "a", minMember: 2, parent: "all", topology: null },
      { name: "b", minMember: 1, parent: "all", topology: { required: "rack", preferred: null } },
    ]);
  });

  it("sub-groups: a parent sub-group may leave out minMember (it only groups others)", async () => {
    const { job: row } = await submitJob(
      t.store,
      admin,
      job({
        name: "parent-without-min",
        subGroups: [{ name: "all" }, { name: "a", minMember: 2, parent: "all" }],
        tasks: [{ name: "x", replicas: 2, resources: { gpu: 1 }, subGroup: "a" }],
      }),
    );
    expect(row.minMember).toBe(2);
    expect(row.subGroups).toEqual([
      { name: "all", minMember: 0, parent: null, topology: null },
      { name: "a", minMember: 2, parent: "all", topology: null },
    ]);
  });

  const bad: [string, SubmitJobInput, string, string][] = [
    [
      "non-leaf queue",
      job({ queue: "org" }),
      "queue",
      'queue: queue "org" has child queues; jobs go to leaf queues',
    ],
    ["unknown cluster", job({ cluster: "c9" }), "cluster", 'cluster: cluster "c9" does not exist'],
    ["no tasks", job({ tasks: [] }), "tasks", "tasks: a job needs at least one task"],
    [
      "zero replicas",
      job({ tasks: [{ name: "w", replicas: 0, resources: { cpu: 100 } }] }),
      "tasks[0].replicas",
      "tasks[0].replicas: replicas must be at least 1",
    ],
    [
      "1.5 GPUs",
      job({ tasks: [{ name: "w", replicas: 1, resources: { gpu: 1.5 } }] }),
      "tasks[0].resources.gpu",
      "tasks[0].resources.gpu: gpu must be a whole number of devices, or a fraction below 1 of one device",
    ],
    [
      "gpu and gpuMemory",
      job({ tasks: [{ name: "w", replicas: 1, resources: { gpu: 1, gpuMemory: 100 } }] }),
      "tasks[0].resources.gpuMemory",
      "tasks[0].resources.gpuMemory: ask for either gpu or gpuMemory, not both",
    ],
    [
      "bad memory",
      job({ tasks: [{ name: "w", replicas: 1, resources: { memory: "lots" } }] }),
      "tasks[0].resources.memory",
      'tasks[0].resources.memory: must be a non-negative number of bytes, e.g. "17179869184" or "16Gi"',
    ],
    [
      "duplicate task",
      job({
        tasks: [
          { name: "w", replicas: 1, resources: { cpu: 100 } },
          { name: "w", replicas: 1, resources: { cpu: 100 } },
        ],
      }),
      "tasks[1].name",
      'tasks[1].name: duplicate task name "w"',
    ],
    [
      "minMember too big",
      job({ minMember: 5 }),
      "minMember",
      "minMember: minMember (5) exceeds the number of pods (2)",
    ],
    [
      "undeclared sub-group",
      job({ tasks: [{ name: "w", replicas: 1, resources: { cpu: 100 }, subGroup: "s" }] }),
      "tasks[0].subGroup",
      'tasks[0].subGroup: sub-group "s" is not declared in subGroups',
    ],
    [
      "sub-group cycle",
      job({
        subGroups: [
          { name: "a", minMember: 1, parent: "b" },
          { name: "b", minMember: 1, parent: "a" },
        ],
        tasks: [{ name: "w", replicas: 1, resources: { cpu: 100 }, subGroup: "a" }],
      }),
      "subGroups[0].parent",
      'subGroups[0].parent: sub-group "a" is its own ancestor',
    ],
    [
      "leaf sub-group without minMember",
      job({
        subGroups: [{ name: "all" }, { name: "a", parent: "all" }],
        tasks: [{ name: "w", replicas: 1, resources: { cpu: 100 }, subGroup: "a" }],
      }),
      "subGroups[1].minMember",
      'subGroups[1].minMember: minMember is required on leaf sub-group "a"',
    ],
    [
      "bad name",
      job({ name: "Train_1" }),
      "name",
      "name: job name must be lowercase letters, digits and '-', starting and ending with a letter or digit",
    ],
    ["unknown field", { ...job(), colour: "red" } as SubmitJobInput, "colour", "colour: unknown field"],
    [
      "cluster and selector",
      job({ cluster: "c1", clusterSelector: [{ key: "region", values: ["eu"] }] }),
      "clusterSelector",
      "clusterSelector: give either cluster or clusterSelector, not both",
    ],
    ["negative priority", job({ priority: -1 }), "priority", "priority: priority must not be negative"],
  ];
  it.each(
    bad,
  )("refuses %s with the field and a clear message, writing nothing", async (_label, input, field, message) => {
    const before = await counts();
    const err = await submitJob(t.store, admin, input).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(InvalidInputError);
    expect(err).toMatchObject({ field, message });
    expect(await counts()).toEqual(before);
  });

  it("refuses an unknown queue as NOT_FOUND naming it, writing nothing", async () => {
    const before = await counts();
    const err = await submitJob(t.store, admin, job({ queue: "nope" })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err).toMatchObject({ field: "queue", message: 'queue "nope" not found' });
    expect(await counts()).toEqual(before);
  });

  it("is idempotent on the key: concurrent retries create one job", async () => {
    const before = await counts();
    const input = job({ idempotencyKey: "ci-run-42" });
    const results = await Promise.all(Array.from({ length: 12 }, () => submitJob(t.store, admin, input)));
    expect(new Set(results.map((r) => r.job.id)).size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    const after = await counts();
    expect(after.jobs - before.jobs).toBe(1);
    expect(after.pods - before.pods).toBe(2);
    expect(after.events - before.events).toBe(1);
  });

  it("refuses a reused key with a different spec; the same key in another queue is another job", async () => {
    await expect(
      submitJob(t.store, admin, job({ idempotencyKey: "ci-run-42", priority: 60 })),
    ).rejects.toMatchObject({
      constructor: ConflictError,
      field: "idempotencyKey",
    });
    await createQueue(t.store, admin, { name: "team-b", parent: "org" });
    const other = await submitJob(t.store, admin, job({ queue: "team-b", idempotencyKey: "ci-run-42" }));
    expect(other.created).toBe(true);
  });
});

describe("cancelJob", () => {
  it("ends pods that never started as FAILED and the job CANCELLED; repeating is a no-op", async () => {
    const { job: row } = await submitJob(t.store, admin, job());
    const r = await cancelJob(t.store, admin, { id: row.id });
    expect(r.job.state).toBe("CANCELLED");
    expect(r.job.pendingReason).toBeNull();
    expect(r.job.finishedAt).not.toBeNull();
    expect(r.bindRequests).toEqual([]);
    const pods = await podsOf(t, row.id);
    expect(pods.every((p) => p.state === "FAILED" && p.message === "job cancelled")).toBe(true);
    const again = await cancelJob(t.store, admin, { id: row.id });
    expect(again.job.finishedAt).toEqual(r.job.finishedAt);
  });

  it("evicts pods holding resources (EVICT BindRequests, generation bumped)", async () => {
    const { job: row } = await submitJob(t.store, admin, job({ cluster: "c1" }));
    await sql(
      t.testDb.url,
      `WITH pods AS (UPDATE pod SET state = 'RUNNING', node_name = 'n1' WHERE job_id = $1)
       UPDATE job SET state = 'RUNNING' WHERE id = $1`,
      [row.id],
    );
    const gen = (await clusterOf(t, "c1")).generation;
    const r = await cancelJob(t.store, admin, { id: row.id });
    expect(r.bindRequests.map((b) => [b.kind, b.nodeName, b.state, Number(b.generation)])).toEqual([
      ["EVICT", "n1", "PENDING", Number(gen) + 1],
      ["EVICT", "n1", "PENDING", Number(gen) + 1],
    ]);
    const pods = await podsOf(t, row.id);
    expect(pods.every((p) => p.state === "RELEASING" && p.nodeName === "n1")).toBe(true);
  });

  it("answers NOT_FOUND for an unknown job, CONFLICT for a finished one", async () => {
    await expect(
      cancelJob(t.store, admin, { id: "0190a0a0-0000-7000-8000-000000000000" }),
    ).rejects.toBeInstanceOf(NotFoundError);
    await expect(cancelJob(t.store, admin, { id: "not-a-uuid" })).rejects.toMatchObject({
      constructor: InvalidInputError,
      field: "id",
    });
    const { job: row } = await submitJob(t.store, admin, job());
    await sql(t.testDb.url, "UPDATE job SET state = 'SUCCEEDED' WHERE id = $1", [row.id]);
    await expect(cancelJob(t.store, admin, { id: row.id })).rejects.toBeInstanceOf(ConflictError);
  });
});

describe("admission writes", () => {
  it("assigns a cluster once; a second admitter loses", async () => {
    const { job: row } = await submitJob(t.store, admin, job());
    const [a, b] = await Promise.all([
      assignJobCluster(t.store, { name: "admission" }, { job: row.id, cluster: "c1" }),
      assignJobCluster(t.store, { name: "admission" }, { job: row.id, cluster: "c1" }),
    ]);
    expect([a, b].sort()).toEqual([false, true]);
    const after = await jobOf(t, row.id);
    expect(after.clusterName).toBe("c1");
    expect(after.pendingReason).toEqual({ message: "waiting for the scheduler on cluster c1", clusters: [] });
  });

  it("records a per-cluster pending reason", async () => {
    const { job: row } = await submitJob(t.store, admin, job());
    const reason = {
      message: "fits on no cluster",
      clusters: [
        { cluster: "c1", message: "short of GPUs", short: [{ resource: "GPU" as const, amount: 2 }] },
      ],
    };
    expect(await setJobPendingReason(t.store, { name: "admission" }, { job: row.id, reason })).toBe(true);
    expect(await setJobPendingReason(t.store, { name: "admission" }, { job: row.id, reason })).toBe(false);
    expect((await jobOf(t, row.id)).pendingReason).toEqual(reason);
  });
});

describe("submitJob racing a change of the queue tree", () => {
  it("a submit that meets a tree change in flight waits it out and then sees the new children", async () => {
    await createQueue(t.store, admin, { name: "racy", parent: "org" });
    // An admin transaction holding the queue row (as createQueue does) while it adds a child.
    const adminTx = new pg.Client({ connectionString: t.testDb.url });
    await adminTx.connect();
    try {
      await adminTx.query("BEGIN");
      await adminTx.query("SELECT name FROM queue WHERE name = 'racy' FOR UPDATE");
      await adminTx.query("INSERT INTO queue (name, parent_name) VALUES ('racy-child', 'racy')");
      const submitting = submitJob(t.store, admin, job({ queue: "racy" })).then(
        () => null,
        (e: unknown) => e,
      );
      await new Promise((r) => setTimeout(r, 150));
      await adminTx.query("COMMIT");
      const err = await submitting;
      expect(err).toBeInstanceOf(InvalidInputError);
      expect(err).toMatchObject({
        field: "queue",
        message: 'queue: queue "racy" has child queues; jobs go to leaf queues',
      });
      expect(await countRows(t.testDb.url, "job", "queue_name = 'racy'")).toBe(0);
    } finally {
      await adminTx.end();
    }
  });

  it("a submit naming a cluster that is deleted meanwhile answers that the cluster does not exist", async () => {
    await registerCluster(t.store, admin, { name: "doomed" });
    const adminTx = new pg.Client({ connectionString: t.testDb.url });
    await adminTx.connect();
    try {
      await adminTx.query("BEGIN");
      await adminTx.query("DELETE FROM cluster WHERE name = 'doomed'");
      const submitting = submitJob(t.store, admin, job({ cluster: "doomed" })).then(
        () => null,
        (e: unknown) => e,
      );
      await new Promise((r) => setTimeout(r, 150));
      await adminTx.query("COMMIT");
      expect(await submitting).toMatchObject({
        field: "cluster",
        message: 'cluster: cluster "doomed" does not exist',
      });
    } finally {
      await adminTx.end();
    }
  });
});
