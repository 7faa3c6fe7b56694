// Bad input over HTTP: a clear error naming the field (BAD_USER_INPUT + extensions.field, or
// NOT_FOUND / CONFLICT where that is the answer) and no change in the database. Oversized or too
// deep queries are refused before they run.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gql, gqlOk, startTestApi, type TestApi } from "../helpers/api.js";
import { countRows, tableRows } from "../helpers/db.js";

let t: TestApi;
const admin = (q: string, v: Record<string, unknown> = {}) => gql(t.url, t.adminToken, q, v);

async function dbState() {
  const url = t.db.url;
  return Promise.all([
    countRows(url, "event"),
    tableRows(url, "queue"),
    tableRows(url, "queue_quota"),
    tableRows(url, "cluster"),
    countRows(url, "api_token"),
    countRows(url, "job"),
    countRows(url, "pod"),
    countRows(url, "node"),
  ]);
}

beforeAll(async () => {
  t = await startTestApi();
  for (const q of [
    `{ name: "org" }`,
    `{ name: "dept", parent: "org" }`,
    `{ name: "team", parent: "dept" }`,
  ]) {
    await gqlOk(t.url, t.adminToken, `mutation { createQueue(input: ${q}) { name } }`);
  }
  await gqlOk(t.url, t.adminToken, `mutation { registerCluster(input: { name: "c1" }) { name } }`);
});
afterAll(async () => t?.close());

const SUBMIT = "mutation($input: SubmitJobInput!) { submitJob(input: $input) { id } }";
const task = (over: Record<string, unknown> = {}) => ({
  name: "w",
  replicas: 1,
  resources: { gpu: 1 },
  ...over,
});
const spec = (over: Record<string, unknown> = {}) => ({ name: "j", queue: "team", tasks: [task()], ...over });

const cases: [string, string, Record<string, unknown>, string, string, RegExp][] = [
  [
    "unknown queue (submit)",
    SUBMIT,
    { input: spec({ queue: "nope" }) },
    "NOT_FOUND",
    "input.queue",
    /queue "nope" not found/,
  ],
  [
    "submit to a non-leaf queue",
    SUBMIT,
    { input: spec({ queue: "dept" }) },
    "BAD_USER_INPUT",
    "input.queue",
    /has child queues/,
  ],
  [
    "unknown cluster (submit)",
    SUBMIT,
    { input: spec({ cluster: "c9" }) },
    "BAD_USER_INPUT",
    "input.cluster",
    /cluster "c9" does not exist/,
  ],
  [
    "malformed job spec: zero replicas",
    SUBMIT,
    { input: spec({ tasks: [task({ replicas: 0 })] }) },
    "BAD_USER_INPUT",
    "input.tasks[0].replicas",
    /replicas must be at least 1/,
  ],
  [
    "malformed job spec: 2.5 GPUs",
    SUBMIT,
    { input: spec({ tasks: [task({ resources: { gpu: 2.5 } })] }) },
    "BAD_USER_INPUT",
    "input.tasks[0].resources.gpu",
    /whole number of devices/,
  ],
  [
    "malformed job spec: memory",
    SUBMIT,
    { input: spec({ tasks: [task({ resources: { memory: "12 parsecs" } })] }) },
    "BAD_USER_INPUT",
    "input.tasks[0].resources.memory",
    /Bytes must be/,
  ],
  [
    "malformed job spec: wrong type",
    SUBMIT,
    { input: spec({ tasks: [task({ replicas: "three" })] }) },
    "BAD_USER_INPUT",
    "input.tasks[0].replicas",
    /Int cannot represent/,
  ],
  [
    "malformed job spec: missing tasks",
    SUBMIT,
    { input: { name: "j", queue: "team" } },
    "BAD_USER_INPUT",
    "input.tasks",
    /tasks/,
  ],
  [
    "malformed job spec: unknown sub-group",
    SUBMIT,
    { input: spec({ tasks: [task({ subGroup: "x" })] }) },
    "BAD_USER_INPUT",
    "input.tasks[0].subGroup",
    /not declared/,
  ],
  [
    "malformed job spec: bad name",
    SUBMIT,
    { input: spec({ name: "My Job" }) },
    "BAD_USER_INPUT",
    "input.name",
    /lowercase/,
  ],
  [
    "negative quota",
    `mutation { setQueueQuota(input: { queue: "team", resource: GPU, deserved: -3 }) { name } }`,
    {},
    "BAD_USER_INPUT",
    "input.deserved",
    /-1 \(unlimited\) or a non-negative amount/,
  ],
  [
    "negative weight",
    `mutation { setQueueQuota(input: { queue: "team", resource: GPU, overQuotaWeight: -1 }) { name } }`,
    {},
    "BAD_USER_INPUT",
    "input.overQuotaWeight",
    /must not be negative/,
  ],
  [
    "quota of an unknown queue",
    `mutation { setQueueQuota(input: { queue: "nope", resource: GPU, deserved: 1 }) { name } }`,
    {},
    "BAD_USER_INPUT",
    "input.queue",
    /does not exist/,
  ],
  [
    "cyclic parent",
    `mutation { updateQueue(name: "org", input: { parent: "team" }) { name } }`,
    {},
    "BAD_USER_INPUT",
    "input.parent",
    /would make a cycle/,
  ],
  [
    "own parent",
    `mutation { updateQueue(name: "team", input: { parent: "team" }) { name } }`,
    {},
    "BAD_USER_INPUT",
    "input.parent",
    /own parent/,
  ],
  [
    "unknown parent",
    `mutation { createQueue(input: { name: "x", parent: "nope" }) { name } }`,
    {},
    "BAD_USER_INPUT",
    "input.parent",
    /does not exist/,
  ],
  [
    "unknown queue to update",
    `mutation { updateQueue(name: "ghost", input: { priority: 1 }) { name } }`,
    {},
    "NOT_FOUND",
    "name",
    /queue "ghost" not found/,
  ],
  [
    "deleting a non-empty queue",
    `mutation { deleteQueue(name: "dept") }`,
    {},
    "CONFLICT",
    "name",
    /child queues/,
  ],
  [
    "duplicate queue",
    `mutation { createQueue(input: { name: "team" }) { name } }`,
    {},
    "CONFLICT",
    "input.name",
    /already exists/,
  ],
  [
    "bad cluster name",
    `mutation { registerCluster(input: { name: "Bad_Name" }) { name } }`,
    {},
    "BAD_USER_INPUT",
    "input.name",
    /lowercase/,
  ],
  [
    "unknown cluster to cordon",
    `mutation { cordonCluster(name: "c9", cordoned: true) { name } }`,
    {},
    "NOT_FOUND",
    "name",
    /cluster "c9" not found/,
  ],
  [
    "MEMBER token without queues",
    `mutation { createToken(input: { name: "x", role: MEMBER }) { id } }`,
    {},
    "BAD_USER_INPUT",
    "input.queues",
    /needs the queues/,
  ],
  [
    "AGENT token for an unknown cluster",
    `mutation { createToken(input: { name: "x", role: AGENT, cluster: "c9" }) { id } }`,
    {},
    "BAD_USER_INPUT",
    "input.cluster",
    /does not exist/,
  ],
  [
    "cancel a job that does not exist",
    `mutation { cancelJob(id: "01900000-0000-7000-8000-000000000000") { id } }`,
    {},
    "NOT_FOUND",
    "id",
    /job .* not found/,
  ],
  [
    "cancel with a malformed id",
    `mutation { cancelJob(id: "42") { id } }`,
    {},
    "BAD_USER_INPUT",
    "id",
    /not a job id/,
  ],
  [
    "jobs filtered by an unknown queue",
    `{ jobs(filter: { queue: "nope" }) { edges { cursor } } }`,
    {},
    "BAD_USER_INPUT",
    "filter.queue",
    /does not exist/,
  ],
  [
    "a page too large",
    `{ jobs(first: 501) { edges { cursor } } }`,
    {},
    "BAD_USER_INPUT",
    "first",
    /between 0 and 500/,
  ],
  [
    "a foreign cursor",
    `{ jobs(after: "bm9wZQ") { edges { cursor } } }`,
    {},
    "BAD_USER_INPUT",
    "after",
    /not a cursor/,
  ],
  [
    "fair share of an unknown cluster",
    `{ fairShare(cluster: "c9") { queue } }`,
    {},
    "NOT_FOUND",
    "cluster",
    /cluster "c9" not found/,
  ],
];

describe("bad input", () => {
  it.each(cases)("%s", async (_label, query, variables, code, field, message) => {
    const before = await dbState();
    const r = await admin(query, variables);
    expect(r.errors).toHaveLength(1);
    const e = r.errors![0]!;
    expect(e.extensions).toMatchObject({ code, field });
    expect(e.message).toMatch(message);
    expect(await dbState()).toEqual(before);
  });

  it("agent reports are checked too: a pod of another cluster, an unknown node field", async () => {
    const agent = (
      await gqlOk<{ createToken: { secret: string } }>(
        t.url,
        t.adminToken,
        `mutation { createToken(input: { name: "a", role: AGENT, cluster: "c1" }) { secret } }`,
      )
    ).createToken.secret;
    const before = await dbState();
    const r1 = await gql(
      t.url,
      agent,
      `mutation { reportPodStatus(cluster: "c1", updates: [{ job: "01900000-0000-7000-8000-000000000000", pod: "w-0", state: RUNNING }]) }`,
    );
    expect(r1.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "updates[0].job" });
    const r2 = await gql(
      t.url,
      agent,
      `mutation { reportNodes(cluster: "c1", complete: true, nodes: [{ name: "n1", capacity: { gpu: 1 } }, { name: "n1", capacity: { gpu: 2 } }]) }`,
    );
    expect(r2.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "nodes[1].name" });
    const r3 = await gql(
      t.url,
      agent,
      `mutation { reportNodes(cluster: "c1", complete: true, nodes: [{ name: "n1", capacity: { gpu: 1 }, taints: ["gpu"] }]) }`,
    );
    expect(r3.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "nodes[0].taints[0]" });
    const r4 = await gql(
      t.url,
      agent,
      `mutation { reportPodStatus(cluster: "c1", updates: [{ job: "01900000-0000-7000-8000-000000000000", pod: "w-0", state: BINDING }]) }`,
    );
    expect(r4.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "updates[0].state" });
    expect((await dbState()).slice(1)).toEqual(before.slice(1)); // (the token's own creation event came before)
  });
});

describe("query limits", () => {
  it("refuses a query nested deeper than the limit", async () => {
    const deep = `{ queues { parent { parent { parent { parent { parent { parent { parent { parent { parent { parent { name } } } } } } } } } } } }`;
    const r = await admin(deep);
    expect(r.status).toBe(400);
    expect(r.errors?.[0]?.message).toMatch(/depth/i);
    expect(r.errors?.[0]?.extensions?.code).toBe("GRAPHQL_VALIDATION_FAILED");
  });

  it("refuses too many aliases, and an oversized query", async () => {
    const aliases = `{ ${Array.from({ length: 40 }, (_, i) => `a${i}: me { name }`).join(" ")} }`;
    expect((await admin(aliases)).errors?.[0]?.message).toMatch(/aliases/i);
    const huge = `{ ${Array.from({ length: 3000 }, () => "me { name }").join(" ")} }`;
    const r = await admin(huge);
    expect(r.errors?.[0]?.message).toMatch(/token/i);
  });

  it("refuses a query whose cost is too high", async () => {
    const costly = `{ jobs { edges { node { pods { name state node gpuGroups task message resources { cpu memory gpu gpuMemory } }
      events { id at kind message job queue cluster actor } bindRequests { id kind cluster job pod node gpuGroups reason state attempts lastError generation createdAt }
      queue { name children { name children { name quotas { cluster resource deserved limit overQuotaWeight } } } }
      cluster { name nodes { name labels { key value } capacity { cpu memory gpu gpuMemory } allocated { cpu memory gpu gpuMemory } free { cpu memory gpu gpuMemory } } } } } } }`;
    const aliased = `{ ${Array.from({ length: 12 }, (_, i) => `a${i}: ${costly.slice(1, -1)}`).join(" ")} }`;
    const r = await admin(aliased);
    expect(r.errors?.[0]?.message).toMatch(/cost limit/i);
    // A page size multiplies the cost: asking for a huge page is refused before it runs.
    const page = await admin(`{ jobs(first: 100000) { edges { cursor } } }`);
    expect(page.errors?.[0]?.message).toMatch(/cost limit/i);
  });
});
