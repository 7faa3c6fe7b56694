// CI pipelines retry: concurrent submissions with one idempotency key, spread over two API
// replicas, create exactly one job (one set of pods, one event) and all answer with it.
import { afterAll, beforeAll, expect, it } from "vitest";
import type { ApiServer } from "../../src/api/server.js";
import { gql, gqlOk, startTestApi, type TestApi } from "../helpers/api.js";
import { countRows } from "../helpers/db.js";

let t: TestApi;
let other: ApiServer;

beforeAll(async () => {
  t = await startTestApi();
  other = await t.replica();
  await gqlOk(t.url, t.adminToken, `mutation { createQueue(input: { name: "ci" }) { name } }`);
});
afterAll(async () => t?.close());

const SUBMIT = "mutation($i: SubmitJobInput!) { submitJob(input: $i) { id name pods { name } } }";
const input = {
  name: "build",
  queue: "ci",
  idempotencyKey: "pipeline-981/attempt",
  tasks: [{ name: "b", replicas: 3, resources: { cpu: 2000 } }],
};

it("20 concurrent retries over two replicas create one job", async () => {
  const responses = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      gql<{ submitJob: { id: string } }>(i % 2 ? other.url : t.url, t.adminToken, SUBMIT, { i: input }),
    ),
  );
  expect(responses.map((r) => r.errors)).toEqual(Array(20).fill(undefined));
  const ids = new Set(responses.map((r) => r.data!.submitJob.id));
  expect(ids.size).toBe(1);
  expect(await countRows(t.db.url, "job")).toBe(1);
  expect(await countRows(t.db.url, "pod")).toBe(3);
  expect(await countRows(t.db.url, "event", "kind = 'job.submitted'")).toBe(1);
});

it("the same key with a different spec is a CONFLICT naming the key, and changes nothing", async () => {
  const r = await gql(t.url, t.adminToken, SUBMIT, {
    i: { ...input, tasks: [{ name: "b", replicas: 4, resources: { cpu: 2000 } }] },
  });
  expect(r.errors?.[0]?.extensions).toEqual({ code: "CONFLICT", field: "input.idempotencyKey" });
  expect(r.errors?.[0]?.message).toMatch(/already used in queue ci for a different job spec/);
  expect(await countRows(t.db.url, "job")).toBe(1);
});

it("without a key, every submission is a new job", async () => {
  const { idempotencyKey: _k, ...anonymous } = input;
  await Promise.all([1, 2, 3].map(() => gqlOk(t.url, t.adminToken, SUBMIT, { i: anonymous })));
  expect(await countRows(t.db.url, "job")).toBe(4);
});
