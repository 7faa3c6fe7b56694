// Absurd numbers are bad input, named, not INTERNAL errors from the database.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gql, gqlOk, startTestApi, type TestApi } from "../helpers/api.js";
import { countRows } from "../helpers/db.js";

let t: TestApi;
const SUBMIT = "mutation($input: SubmitJobInput!) { submitJob(input: $input) { id } }";
const job = (resources: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  name: "j",
  queue: "team",
  tasks: [{ name: "w", replicas: 1, resources, ...extra }],
});

beforeAll(async () => {
  t = await startTestApi();
  await gqlOk(t.url, t.adminToken, `mutation { createQueue(input: { name: "team" }) { name } }`);
});
afterAll(async () => t?.close());

describe("numeric input is checked against its column's range", () => {
  it.each([
    ["memory above 2^63", job({ memory: "9223372036854775808" }), "input.tasks[0].resources.memory"],
    ["memory of 16Ei", job({ memory: "16384Pi" }), "input.tasks[0].resources.memory"],
    ["gpu above int4", job({ gpu: 2 ** 31 }), "input.tasks[0].resources.gpu"],
    [
      "durationSeconds above int4",
      job({ cpu: 1 }, { durationSeconds: 2 ** 31 }),
      "input.tasks[0].durationSeconds",
    ],
  ])("%s: BAD_USER_INPUT naming the field", async (_name, input, field) => {
    const r = await gql(t.url, t.adminToken, SUBMIT, { input });
    expect(r.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field });
    expect(await countRows(t.db.url, "job")).toBe(0);
  });

  it("a malformed cursor is BAD_USER_INPUT", async () => {
    const cursor = Buffer.from(`${new Date().toISOString()}|not-a-uuid`).toString("base64url");
    const r = await gql(t.url, t.adminToken, "query($a: String) { jobs(after: $a) { edges { cursor } } }", {
      a: cursor,
    });
    expect(r.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "after" });
  });
});
