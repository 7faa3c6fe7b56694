// Pod templates (which can carry credentials) are visible only to ADMIN, MEMBERs of the job's
// queue and the AGENT of the job's cluster.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gqlOk, startTestApi, type TestApi } from "../helpers/api.js";

let t: TestApi;
let jobId: string;
const tokens: Record<string, string> = {};
const TEMPLATE = {
  spec: { containers: [{ name: "main", image: "x", env: [{ name: "API_KEY", value: "s3cret" }] }] },
};

async function token(name: string, role: string, extra = "") {
  const d = await gqlOk<{ createToken: { secret: string } }>(
    t.url,
    t.adminToken,
    `mutation { createToken(input: { name: "${name}", role: ${role} ${extra} }) { secret } }`,
  );
  tokens[name] = d.createToken.secret;
}

beforeAll(async () => {
  t = await startTestApi();
  for (const q of [`{ name: "team-a" }`, `{ name: "team-b" }`])
    await gqlOk(t.url, t.adminToken, `mutation { createQueue(input: ${q}) { name } }`);
  for (const c of ["c1", "c2"])
    await gqlOk(t.url, t.adminToken, `mutation { registerCluster(input: { name: "${c}" }) { name } }`);
  await token("member-a", "MEMBER", `, queues: ["team-a"]`);
  await token("member-b", "MEMBER", `, queues: ["team-b"]`);
  await token("viewer", "VIEWER");
  await token("agent-c1", "AGENT", `, cluster: "c1"`);
  await token("agent-c2", "AGENT", `, cluster: "c2"`);
  const d = await gqlOk<{ submitJob: { id: string } }>(
    t.url,
    tokens["member-a"]!,
    "mutation($i: SubmitJobInput!) { submitJob(input: $i) { id } }",
    {
      i: {
        name: "train",
        queue: "team-a",
        cluster: "c1",
        tasks: [{ name: "w", replicas: 1, resources: { cpu: 100 }, template: TEMPLATE }],
      },
    },
  );
  jobId = d.submitJob.id;
});
afterAll(async () => t?.close());

describe("template visibility", () => {
  const templateAs = async (who: string | null) =>
    (
      await gqlOk<{ job: { tasks: { template: unknown }[] } }>(
        t.url,
        who === null ? t.adminToken : tokens[who]!,
        `{ job(id: "${jobId}") { tasks { template } } }`,
      )
    ).job.tasks[0]!.template;

  it.each([
    ["ADMIN", null, true],
    ["a MEMBER of the job's queue", "member-a", true],
    ["the AGENT of the job's cluster", "agent-c1", true],
    ["a MEMBER of another queue", "member-b", false],
    ["a VIEWER", "viewer", false],
    ["the AGENT of another cluster", "agent-c2", false],
  ])("%s: %s", async (_what, who, sees) => {
    expect(await templateAs(who)).toEqual(sees ? TEMPLATE : null);
  });
});
