// Queue tree and quota operations against real PostgreSQL: what they write, what they refuse,
// and that a refusal changes nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConflictError, InvalidInputError, NotFoundError } from "../../src/store/errors.js";
import { registerCluster } from "../../src/store/operations/clusters.js";
import { createQueue, deleteQueue, setQueueQuota, updateQueue } from "../../src/store/operations/queues.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { queuesNamed, quotasOf } from "../../src/store/index.js";
import { countRows, tableRows } from "../helpers/db.js";
import { eventually, openTestStore, type TestStore } from "../helpers/store.js";
import { admin, job } from "./fixtures.js";

let t: TestStore;
beforeAll(async () => {
  t = await openTestStore();
  await createQueue(t.store, admin, { name: "org" });
  await createQueue(t.store, admin, { name: "dept", parent: "org", priority: 120 });
  await createQueue(t.store, admin, { name: "team-a", parent: "dept" });
  await createQueue(t.store, admin, { name: "team-b", parent: "dept" });
  await registerCluster(t.store, admin, { name: "c1" });
});
afterAll(async () => t?.close());

const snapshotTables = async () => ({
  queues: await tableRows(t.testDb.url, "queue"),
  quotas: await tableRows(t.testDb.url, "queue_quota"),
  events: await countRows(t.testDb.url, "event"),
});

async function expectRefusedWithoutChange(
  op: () => Promise<unknown>,
  kind: new (...a: never[]) => Error,
  field?: string,
) {
  const before = await snapshotTables();
  const err = await op().then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(kind);
  if (field !== undefined) expect((err as { field?: string }).field).toBe(field);
  expect(await snapshotTables()).toEqual(before);
  return err as Error;
}

describe("createQueue", () => {
  it("builds the tree and records an event that is published", async () => {
    const [q] = await queuesNamed(t.store, ["dept"]);
    expect(q).toMatchObject({ parentName: "org", priority: 120 });
    expect((await queuesNamed(t.store, ["org"]))[0]!.priority).toBe(100);
    const e = await eventually(() =>
      t.published.find((x) => x.kind === "queue.created" && x.queue === "team-a"),
    );
    expect(e.message).toBe("queue team-a created under dept");
    expect(e.actor).toBe("test-admin");
  });

  it("refuses a duplicate, an unknown parent and a bad name", async () => {
    await expectRefusedWithoutChange(
      () => createQueue(t.store, admin, { name: "team-a" }),
      ConflictError,
      "name",
    );
    const e = await expectRefusedWithoutChange(
      () => createQueue(t.store, admin, { name: "x", parent: "nope" }),
      InvalidInputError,
      "parent",
    );
    expect(e.message).toBe('parent: queue "nope" does not exist');
    await expectRefusedWithoutChange(
      () => createQueue(t.store, admin, { name: "bad name!" }),
      InvalidInputError,
      "name",
    );
    await expectRefusedWithoutChange(
      () => createQueue(t.store, admin, { name: "ok", priority: -1 }),
      InvalidInputError,
      "priority",
    );
  });

  it("refuses children under a queue that holds unfinished jobs", async () => {
    await createQueue(t.store, admin, { name: "busy", parent: "org" });
    await submitJob(t.store, admin, job({ queue: "busy" }));
    const e = await expectRefusedWithoutChange(
      () => createQueue(t.store, admin, { name: "sub", parent: "busy" }),
      ConflictError,
      "parent",
    );
    expect(e.message).toContain("unfinished job");
  });
});

describe("updateQueue", () => {
  it("moves a queue and changes its priority", async () => {
    await createQueue(t.store, admin, { name: "mover", parent: "org" });
    const q = await updateQueue(t.store, admin, { name: "mover", parent: "dept", priority: 7 });
    expect(q).toMatchObject({ parentName: "dept", priority: 7 });
    const top = await updateQueue(t.store, admin, { name: "mover", parent: null });
    expect(top.parentName).toBeNull();
    expect((await updateQueue(t.store, admin, { name: "mover", priority: 8 })).parentName).toBeNull();
  });

  it("refuses cycles: itself, and a queue below it", async () => {
    const self = await expectRefusedWithoutChange(
      () => updateQueue(t.store, admin, { name: "dept", parent: "dept" }),
      InvalidInputError,
      "parent",
    );
    expect(self.message).toContain("cannot be its own parent");
    const loop = await expectRefusedWithoutChange(
      () => updateQueue(t.store, admin, { name: "org", parent: "team-a" }),
      InvalidInputError,
      "parent",
    );
    expect(loop.message).toContain("would make a cycle");
  });

  it("answers NOT_FOUND for an unknown queue", async () => {
    await expectRefusedWithoutChange(
      () => updateQueue(t.store, admin, { name: "ghost", priority: 1 }),
      NotFoundError,
      "name",
    );
  });

  it("concurrent opposite moves never close a loop", async () => {
    await createQueue(t.store, admin, { name: "p1" });
    await createQueue(t.store, admin, { name: "p2" });
    const results = await Promise.allSettled([
      updateQueue(t.store, admin, { name: "p1", parent: "p2" }),
      updateQueue(t.store, admin, { name: "p2", parent: "p1" }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const rows = await queuesNamed(t.store, ["p1", "p2"]);
    expect(rows.filter((r) => r.parentName !== null)).toHaveLength(1);
  });
});

describe("deleteQueue", () => {
  it("refuses a queue with children or unfinished jobs, deletes an empty one", async () => {
    await expectRefusedWithoutChange(
      () => deleteQueue(t.store, admin, { name: "dept" }),
      ConflictError,
      "name",
    );
    await expectRefusedWithoutChange(
      () => deleteQueue(t.store, admin, { name: "busy" }),
      ConflictError,
      "name",
    );
    await createQueue(t.store, admin, { name: "empty", parent: "org" });
    expect(await deleteQueue(t.store, admin, { name: "empty" })).toBe(true);
    expect(await queuesNamed(t.store, ["empty"])).toEqual([]);
    await expectRefusedWithoutChange(
      () => deleteQueue(t.store, admin, { name: "empty" }),
      NotFoundError,
      "name",
    );
  });
});

describe("setQueueQuota", () => {
  it("writes the default row and a per-cluster override; omitted fields keep their value", async () => {
    await setQueueQuota(t.store, admin, {
      queue: "team-a",
      resource: "GPU",
      deserved: 4,
      limit: 8,
      overQuotaWeight: 2,
    });
    await setQueueQuota(t.store, admin, { queue: "team-a", cluster: "c1", resource: "GPU", deserved: 2 });
    await setQueueQuota(t.store, admin, { queue: "team-a", resource: "GPU", limit: -1 });
    const rows = await quotasOf(t.store, ["team-a"]);
    expect(rows.map(({ updatedAt: _u, ...r }) => r)).toEqual([
      { queueName: "team-a", scope: "*", resource: "GPU", deserved: 4, limit: -1, overQuotaWeight: 2 },
      { queueName: "team-a", scope: "c1", resource: "GPU", deserved: 2, limit: null, overQuotaWeight: null },
    ]);
  });

  it("clears a row when every field is set to null", async () => {
    await setQueueQuota(t.store, admin, { queue: "team-b", resource: "CPU", deserved: 1000 });
    await setQueueQuota(t.store, admin, { queue: "team-b", resource: "CPU", deserved: null });
    expect(await quotasOf(t.store, ["team-b"])).toEqual([]);
  });

  it("refuses negative amounts, deserved above limit, fractions of CPU, unknown queues and clusters", async () => {
    const neg = await expectRefusedWithoutChange(
      () => setQueueQuota(t.store, admin, { queue: "team-a", resource: "GPU", deserved: -2 }),
      InvalidInputError,
      "deserved",
    );
    expect(neg.message).toBe("deserved: deserved must be -1 (unlimited) or a non-negative amount");
    await expectRefusedWithoutChange(
      () => setQueueQuota(t.store, admin, { queue: "team-a", resource: "GPU", overQuotaWeight: -1 }),
      InvalidInputError,
      "overQuotaWeight",
    );
    await expectRefusedWithoutChange(
      () => setQueueQuota(t.store, admin, { queue: "team-a", resource: "GPU", limit: 3, deserved: 5 }),
      InvalidInputError,
      "deserved",
    );
    await expectRefusedWithoutChange(
      () => setQueueQuota(t.store, admin, { queue: "team-a", resource: "CPU", deserved: 1.5 }),
      InvalidInputError,
      "deserved",
    );
    await expectRefusedWithoutChange(
      () => setQueueQuota(t.store, admin, { queue: "nope", resource: "GPU", deserved: 1 }),
      InvalidInputError,
      "queue",
    );
    await expectRefusedWithoutChange(
      () => setQueueQuota(t.store, admin, { queue: "team-a", cluster: "c9", resource: "GPU", deserved: 1 }),
      InvalidInputError,
      "cluster",
    );
  });
});
