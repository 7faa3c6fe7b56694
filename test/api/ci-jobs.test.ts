// Jobs for CI pipelines over HTTP: labels (Kubernetes syntax, shown on Job, filtered on through
// jobs(filter: { labels })), run-time fields, and submitJobs — many jobs in one transaction,
// idempotent per job, refused as a whole (with the input's position) when one input is bad.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gql, gqlOk, startTestApi, type TestApi } from "../helpers/api.js";
import { admin, countRows, sql } from "../helpers/db.js";

let t: TestApi;
beforeAll(async () => {
  t = await startTestApi();
  await gqlOk(t.url, t.adminToken, `mutation { createQueue(input: { name: "ci" }) { name } }`);
  await gqlOk(t.url, t.adminToken, `mutation { createQueue(input: { name: "other" }) { name } }`);
  await gqlOk(
    t.url,
    t.adminToken,
    `mutation { createQueue(input: { name: "team", parent: "other" }) { name } }`,
  );
});
afterAll(async () => t?.close());

const JOB_FIELDS = "id name state labels { key value } maxRuntimeSeconds expectedRuntimeSeconds";
const SUBMIT = `mutation($i: SubmitJobInput!) { submitJob(input: $i) { ${JOB_FIELDS} } }`;
const SUBMIT_MANY = `mutation($i: [SubmitJobInput!]!) { submitJobs(inputs: $i) { ${JOB_FIELDS} } }`;
const LIST = `query($f: JobFilter, $first: Int, $after: String) {
  jobs(filter: $f, first: $first, after: $after) { edges { node { name } } pageInfo { hasNextPage endCursor } } }`;

interface JobOut {
  id: string;
  name: string;
  state: string;
  labels: { key: string; value: string }[];
  maxRuntimeSeconds: number | null;
  expectedRuntimeSeconds: number | null;
}

let n = 0;
const spec = (over: Record<string, unknown> = {}) => ({
  name: `j${++n}`,
  queue: "ci",
  tasks: [{ name: "w", replicas: 2, resources: { cpu: 100 } }],
  ...over,
});

const counts = async () => ({
  jobs: await countRows(t.db.url, "job"),
  pods: await countRows(t.db.url, "pod"),
  events: await countRows(t.db.url, "event"),
});

async function names(filter: Record<string, unknown>, first = 50): Promise<string[]> {
  const out: string[] = [];
  let after: string | null = null;
  for (;;) {
    const r: {
      jobs: { edges: { node: { name: string } }[]; pageInfo: { hasNextPage: boolean; endCursor: string } };
    } = await gqlOk(t.url, t.adminToken, LIST, { f: filter, first, after });
    out.push(...r.jobs.edges.map((e) => e.node.name));
    if (!r.jobs.pageInfo.hasNextPage) return out;
    after = r.jobs.pageInfo.endCursor;
  }
}

describe("labels and run-time fields", () => {
  it("are stored and shown (labels in key order); jobs without them show [] and null", async () => {
    const { submitJob } = await gqlOk<{ submitJob: JobOut }>(t.url, t.adminToken, SUBMIT, {
      i: spec({
        labels: [
          { key: "pipeline", value: "123" },
          { key: "ci.example.com/stage", value: "test" },
          { key: "empty", value: "" },
        ],
        maxRuntimeSeconds: 3600,
        expectedRuntimeSeconds: 600,
      }),
    });
    expect(submitJob.labels).toEqual([
      { key: "ci.example.com/stage", value: "test" },
      { key: "empty", value: "" },
      { key: "pipeline", value: "123" },
    ]);
    expect(submitJob.maxRuntimeSeconds).toBe(3600);
    expect(submitJob.expectedRuntimeSeconds).toBe(600);
    const again = await gqlOk<{ job: JobOut }>(
      t.url,
      t.adminToken,
      `query($id: ID!) { job(id: $id) { ${JOB_FIELDS} } }`,
      {
        id: submitJob.id,
      },
    );
    expect(again.job).toEqual(submitJob);
    const plain = await gqlOk<{ submitJob: JobOut }>(t.url, t.adminToken, SUBMIT, { i: spec() });
    expect(plain.submitJob).toMatchObject({
      labels: [],
      maxRuntimeSeconds: null,
      expectedRuntimeSeconds: null,
    });
  });

  const bad: [string, Record<string, unknown>, string, RegExp][] = [
    [
      "a key with a space",
      {
        labels: [
          { key: "a", value: "1" },
          { key: "bad key", value: "x" },
        ],
      },
      "input.labels[1].key",
      /label key "bad key" must be letters, digits/,
    ],
    [
      "a key name over 63 characters",
      { labels: [{ key: "k".repeat(64), value: "x" }] },
      "input.labels[0].key",
      /at most 63 characters/,
    ],
    [
      "an upper-case prefix",
      { labels: [{ key: "Example.com/k", value: "x" }] },
      "input.labels[0].key",
      /DNS subdomain/,
    ],
    ["an empty key", { labels: [{ key: "", value: "x" }] }, "input.labels[0].key", /must not be empty/],
    [
      "a value ending in '-'",
      { labels: [{ key: "k", value: "v-" }] },
      "input.labels[0].value",
      /label value must be empty or letters/,
    ],
    [
      "a value over 63 characters",
      { labels: [{ key: "k", value: "v".repeat(64) }] },
      "input.labels[0].value",
      /at most 63/,
    ],
    [
      "a repeated key",
      {
        labels: [
          { key: "k", value: "1" },
          { key: "k", value: "2" },
        ],
      },
      "input.labels[1].key",
      /duplicate label key "k"/,
    ],
    ["maxRuntimeSeconds 0", { maxRuntimeSeconds: 0 }, "input.maxRuntimeSeconds", /at least 1/],
    [
      "maxRuntimeSeconds over a year",
      { maxRuntimeSeconds: 31_536_001 },
      "input.maxRuntimeSeconds",
      /at most 31536000/,
    ],
    [
      "expectedRuntimeSeconds negative",
      { expectedRuntimeSeconds: -5 },
      "input.expectedRuntimeSeconds",
      /at least 1/,
    ],
    [
      "expected beyond the limit",
      { maxRuntimeSeconds: 60, expectedRuntimeSeconds: 61 },
      "input.expectedRuntimeSeconds",
      /exceeds maxRuntimeSeconds \(60\)/,
    ],
  ];
  it.each(bad)("%s: BAD_USER_INPUT naming the field, nothing stored", async (_what, over, field, message) => {
    const before = await counts();
    const r = await gql(t.url, t.adminToken, SUBMIT, { i: spec(over) });
    expect(r.errors?.[0]?.extensions).toEqual({ code: "BAD_USER_INPUT", field });
    expect(r.errors?.[0]?.message).toMatch(message);
    expect(r.errors?.[0]?.message.startsWith(`${field}: `)).toBe(true);
    expect(await counts()).toEqual(before);
  });

  it("an idempotent retry must carry the same labels", async () => {
    const i = spec({ idempotencyKey: "run-7", labels: [{ key: "pipeline", value: "7" }] });
    const first = await gqlOk<{ submitJob: JobOut }>(t.url, t.adminToken, SUBMIT, { i });
    const retry = await gqlOk<{ submitJob: JobOut }>(t.url, t.adminToken, SUBMIT, { i });
    expect(retry.submitJob.id).toBe(first.submitJob.id);
    const changed = await gql(t.url, t.adminToken, SUBMIT, {
      i: { ...i, labels: [{ key: "pipeline", value: "8" }] },
    });
    expect(changed.errors?.[0]?.extensions).toEqual({ code: "CONFLICT", field: "input.idempotencyKey" });
  });
});

describe("jobs(filter: { labels })", () => {
  beforeAll(async () => {
    const labelled = (name: string, labels: Record<string, string>, queue = "ci") =>
      spec({ name, queue, labels: Object.entries(labels).map(([key, value]) => ({ key, value })) });
    await gqlOk(t.url, t.adminToken, SUBMIT_MANY, {
      i: [
        labelled("f-a", { pipeline: "500", stage: "build" }),
        labelled("f-b", { pipeline: "500", stage: "test" }),
        labelled("f-c", { pipeline: "501", stage: "test" }),
        labelled("f-d", { pipeline: "500", stage: "test" }, "team"),
        labelled("f-e", { stage: "test" }),
      ],
    });
  });

  it("every match must hold; a match's values are alternatives; combines with the other filters", async () => {
    expect(await names({ labels: [{ key: "pipeline", values: ["500"] }] })).toEqual(["f-d", "f-b", "f-a"]);
    expect(
      await names({
        labels: [
          { key: "pipeline", values: ["500"] },
          { key: "stage", values: ["test"] },
        ],
      }),
    ).toEqual(["f-d", "f-b"]);
    expect(
      await names({
        labels: [
          { key: "pipeline", values: ["500", "501"] },
          { key: "stage", values: ["test"] },
        ],
      }),
    ).toEqual(["f-d", "f-c", "f-b"]);
    expect(await names({ queue: "other", labels: [{ key: "pipeline", values: ["500"] }] })).toEqual(["f-d"]);
    expect(await names({ state: "RUNNING", labels: [{ key: "pipeline", values: ["500"] }] })).toEqual([]);
    expect(await names({ labels: [{ key: "pipeline", values: ["nope"] }] })).toEqual([]);
  });

  it("pages through the matches with cursors", async () => {
    expect(await names({ labels: [{ key: "stage", values: ["test", "build"] }] }, 2)).toEqual([
      "f-e",
      "f-d",
      "f-c",
      "f-b",
      "f-a",
    ]);
  });

  it("a malformed match is BAD_USER_INPUT naming it", async () => {
    const r = await gql(t.url, t.adminToken, LIST, {
      f: {
        labels: [
          { key: "ok", values: ["1"] },
          { key: "a b", values: ["1"] },
        ],
      },
    });
    expect(r.errors?.[0]?.extensions).toEqual({ code: "BAD_USER_INPUT", field: "filter.labels[1].key" });
    const none = await gql(t.url, t.adminToken, LIST, { f: { labels: [{ key: "k", values: [] }] } });
    expect(none.errors?.[0]?.extensions).toEqual({
      code: "BAD_USER_INPUT",
      field: "filter.labels[0].values",
    });
  });

  it("uses the GIN index on job.labels", async () => {
    const plan = await admin(async (c) => {
      await c.query("SET enable_seqscan = off");
      return (
        await c.query<{ "QUERY PLAN": string }>(
          `EXPLAIN SELECT id FROM job WHERE labels @> '{"pipeline":"500"}'::jsonb`,
        )
      ).rows;
    }, t.db.url);
    expect(plan.map((r) => r["QUERY PLAN"]).join("\n")).toMatch(/job_labels_idx/);
  });
});

describe("submitJobs", () => {
  it("stores every job in input order with its pods and one event each", async () => {
    const before = await counts();
    const inputs = Array.from({ length: 25 }, (_, i) =>
      spec({ name: `m-${i}`, labels: [{ key: "matrix", value: String(i) }] }),
    );
    const { submitJobs } = await gqlOk<{ submitJobs: JobOut[] }>(t.url, t.adminToken, SUBMIT_MANY, {
      i: inputs,
    });
    expect(submitJobs.map((j) => j.name)).toEqual(inputs.map((i) => i.name));
    expect(submitJobs.every((j) => j.state === "PENDING")).toBe(true);
    expect(submitJobs[3]!.labels).toEqual([{ key: "matrix", value: "3" }]);
    expect(await counts()).toEqual({
      jobs: before.jobs + 25,
      pods: before.pods + 50,
      events: before.events + 25,
    });
    // one pod per replica, named <task>-<i>, with UUIDv7 ids of the job's millisecond
    const pods = await sql<{ id: string; name: string; taskName: string; cpuMillis: number; state: string }>(
      t.db.url,
      `SELECT id::text, name, task_name AS "taskName", cpu_millis AS "cpuMillis", state::text FROM pod
       WHERE job_id = $1 ORDER BY name`,
      [submitJobs[0]!.id],
    );
    expect(pods.map((p) => [p.name, p.taskName, p.cpuMillis, p.state])).toEqual([
      ["w-0", "w", 100, "PENDING"],
      ["w-1", "w", 100, "PENDING"],
    ]);
    for (const p of pods)
      expect(p.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(pods[0]!.id.slice(0, 13)).toBe(submitJobs[0]!.id.slice(0, 13));
    // newest first: the batch in reverse
    const listed = await names({ labels: [{ key: "matrix", values: inputs.map((_, i) => String(i)) }] });
    expect(listed).toEqual(inputs.map((i) => i.name).reverse());
  });

  it("is idempotent per job: a retried batch creates only what is missing", async () => {
    const inputs = ["x", "y", "z"].map((k) => spec({ name: `idem-${k}`, idempotencyKey: `b-${k}` }));
    const first = await gqlOk<{ submitJobs: JobOut[] }>(t.url, t.adminToken, SUBMIT_MANY, {
      i: inputs.slice(0, 2),
    });
    const before = await counts();
    const second = await gqlOk<{ submitJobs: JobOut[] }>(t.url, t.adminToken, SUBMIT_MANY, { i: inputs });
    expect(second.submitJobs.slice(0, 2).map((j) => j.id)).toEqual(first.submitJobs.map((j) => j.id));
    expect(await counts()).toEqual({
      jobs: before.jobs + 1,
      pods: before.pods + 2,
      events: before.events + 1,
    });
    // and submitJob with one of the keys answers with the batch's job
    const one = await gqlOk<{ submitJob: JobOut }>(t.url, t.adminToken, SUBMIT, { i: inputs[2] });
    expect(one.submitJob.id).toBe(second.submitJobs[2]!.id);
    // the same key twice in one batch: one job
    const twice = await gqlOk<{ submitJobs: JobOut[] }>(t.url, t.adminToken, SUBMIT_MANY, {
      i: [spec({ name: "dup", idempotencyKey: "dup-1" }), spec({ name: "dup", idempotencyKey: "dup-1" })],
    });
    expect(twice.submitJobs[0]!.id).toBe(twice.submitJobs[1]!.id);
  });

  it("concurrent retries of overlapping batches, in any order, make one job per key", async () => {
    const inputs = Array.from({ length: 100 }, (_, i) =>
      spec({ name: `race-${i}`, idempotencyKey: `race-${i}` }),
    );
    const before = await counts();
    const batches = [inputs, [...inputs].reverse(), inputs.slice(25, 75), [...inputs.slice(50)].reverse()];
    const answers = await Promise.all(
      [...batches, ...batches].map((i) =>
        gqlOk<{ submitJobs: JobOut[] }>(t.url, t.adminToken, SUBMIT_MANY, { i }),
      ),
    );
    const idOf = new Map<string, string>();
    for (const a of answers)
      for (const j of a.submitJobs) {
        expect(idOf.get(j.name) ?? j.id).toBe(j.id);
        idOf.set(j.name, j.id);
      }
    expect(idOf.size).toBe(100);
    expect(await counts()).toEqual({
      jobs: before.jobs + 100,
      pods: before.pods + 200,
      events: before.events + 100,
    });
  });

  it("a reused key with another spec is a CONFLICT naming the input; nothing is stored", async () => {
    await gqlOk(t.url, t.adminToken, SUBMIT, { i: spec({ name: "taken", idempotencyKey: "taken" }) });
    const before = await counts();
    const r = await gql(t.url, t.adminToken, SUBMIT_MANY, {
      i: [spec(), spec({ name: "taken2", idempotencyKey: "taken" })],
    });
    expect(r.errors?.[0]?.extensions).toEqual({ code: "CONFLICT", field: "inputs[1].idempotencyKey" });
    const inBatch = await gql(t.url, t.adminToken, SUBMIT_MANY, {
      i: [spec({ name: "p", idempotencyKey: "k2" }), spec({ name: "q", idempotencyKey: "k2" })],
    });
    expect(inBatch.errors?.[0]?.extensions).toEqual({ code: "CONFLICT", field: "inputs[1].idempotencyKey" });
    expect(await counts()).toEqual(before);
  });

  const bad: [string, Record<string, unknown>[], string, string, RegExp][] = [
    [
      "a bad label",
      [
        spec(),
        spec({
          labels: [
            { key: "ok", value: "1" },
            { key: "-x", value: "1" },
          ],
        }),
      ],
      "BAD_USER_INPUT",
      "inputs[1].labels[1].key",
      /^inputs\[1\]\.labels\[1\]\.key: label key "-x"/,
    ],
    [
      "an unknown queue",
      [spec(), spec(), spec({ queue: "nope" })],
      "NOT_FOUND",
      "inputs[2].queue",
      /queue "nope" not found/,
    ],
    [
      "a queue with children",
      [spec({ queue: "other" })],
      "BAD_USER_INPUT",
      "inputs[0].queue",
      /has child queues/,
    ],
    [
      "an unknown cluster",
      [spec(), spec({ cluster: "c9" })],
      "BAD_USER_INPUT",
      "inputs[1].cluster",
      /cluster "c9" does not exist/,
    ],
    [
      "a bad task",
      [spec({ tasks: [{ name: "w", replicas: 0, resources: { cpu: 1 } }] })],
      "BAD_USER_INPUT",
      "inputs[0].tasks[0].replicas",
      /at least 1/,
    ],
    [
      "a namespace outside the queue's",
      [spec(), spec({ namespace: "kube-system" })],
      "FORBIDDEN",
      "inputs[1].namespace",
      /not allowed for jobs of queue ci/,
    ],
  ];
  it.each(
    bad,
  )("%s refuses the whole batch, naming inputs[i]", async (_what, inputs, code, field, message) => {
    const before = await counts();
    const r = await gql(t.url, t.adminToken, SUBMIT_MANY, { i: inputs });
    expect(r.errors?.[0]?.extensions).toEqual({ code, field });
    expect(r.errors?.[0]?.message).toMatch(message);
    expect(await counts()).toEqual(before);
  });

  it("takes at most 1000 jobs; an empty list is an empty answer", async () => {
    const before = await counts();
    const tiny = { name: "t", queue: "ci", tasks: [{ name: "w", replicas: 1, resources: { cpu: 1 } }] };
    const r = await gql(t.url, t.adminToken, SUBMIT_MANY, { i: Array(1001).fill(tiny) });
    expect(r.errors?.[0]?.extensions).toEqual({ code: "BAD_USER_INPUT", field: "inputs" });
    expect(r.errors?.[0]?.message).toMatch(/at most 1000 jobs/);
    expect(await counts()).toEqual(before);
    expect(await gqlOk(t.url, t.adminToken, SUBMIT_MANY, { i: [] })).toEqual({ submitJobs: [] });
  });
});
