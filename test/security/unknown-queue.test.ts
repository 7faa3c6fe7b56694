// A submission names a queue that must exist when the job is stored, and its policy is checked in
// the transaction that stores the job, with the queue and its ancestors locked: a queue unknown at
// submit is NOT_FOUND for every role, and a policy change in progress either comes first (and is
// seen) or waits for the submit. Every path that makes jobs: submitJob, submitJobs, workloads and
// the agent's pod groups.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gql, gqlOk, registerClusterWithAgent, startTestApi, type TestApi } from "../helpers/api.js";
import { admin as pgAdmin, countRows } from "../helpers/db.js";

let t: TestApi;
let member = "";
let agent = "";
const asAdmin = (q: string, v: Record<string, unknown> = {}) => gqlOk(t.url, t.adminToken, q, v);

const SUBMIT = "mutation($input: SubmitJobInput!) { submitJob(input: $input) { id } }";
const SUBMIT_MANY = "mutation($inputs: [SubmitJobInput!]!) { submitJobs(inputs: $inputs) { id } }";
const SUBMIT_WORKLOAD = "mutation($input: SubmitWorkloadInput!) { submitWorkload(input: $input) { id } }";
const REPORT = 'mutation($g: [PodGroupReport!]!) { reportPodGroups(cluster: "c1", groups: $g) }';

const job = (queue: string, namespace = "default") => ({
  name: `j-${Math.random().toString(36).slice(2, 8)}`,
  queue,
  namespace,
  tasks: [
    {
      name: "w",
      replicas: 1,
      resources: { gpu: 1 },
      template: { spec: { containers: [{ name: "main", image: "x", resources: {} }] } },
    },
  ],
});
const manifest = (name: string, namespace = "default") => ({
  apiVersion: "batch/v1",
  kind: "Job",
  metadata: { name, namespace },
  spec: {
    template: { spec: { containers: [{ name: "main", image: "x", resources: { limits: { cpu: "1" } } }] } },
  },
});

beforeAll(async () => {
  t = await startTestApi();
  await asAdmin(`mutation { createQueue(input: { name: "org", namespaces: ["default"] }) { name } }`);
  await asAdmin(`mutation { createQueue(input: { name: "team", parent: "org" }) { name } }`);
  const r = await gqlOk<{ createToken: { secret: string } }>(
    t.url,
    t.adminToken,
    `mutation { createToken(input: { name: "alice", role: MEMBER, queues: ["org"] }) { secret } }`,
  );
  member = r.createToken.secret;
  agent = await registerClusterWithAgent(t);
});
afterAll(async () => t?.close());

const jobCount = () => countRows(t.db.url, "job");

describe("a submission to a queue that does not exist", () => {
  it("is NOT_FOUND naming the queue, for a MEMBER and an ADMIN, on every submit path, and stores nothing", async () => {
    const before = await jobCount();
    for (const token of [member, t.adminToken]) {
      const attempts = [
        await gql(t.url, token, SUBMIT, { input: job("nowhere") }),
        await gql(t.url, token, SUBMIT_MANY, { inputs: [job("team"), job("nowhere")] }),
        await gql(t.url, token, SUBMIT_WORKLOAD, { input: { manifest: manifest("w1"), queue: "nowhere" } }),
      ];
      for (const r of attempts) {
        expect(r.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
        expect(r.errors?.[0]?.message).toBe('queue "nowhere" not found');
      }
    }
    expect(await jobCount()).toBe(before);
  });
});

/** Runs `submit` while another transaction holds an uncommitted change of queue `team`'s policy
 * (what updateQueue writes), committed 300 ms later. */
async function racingPolicyChange<T>(sql: string, submit: () => Promise<T>): Promise<T> {
  return pgAdmin(async (c) => {
    await c.query("BEGIN");
    await c.query(sql);
    const result = submit();
    await new Promise((r) => setTimeout(r, 300));
    await c.query("COMMIT");
    return result;
  }, t.db.url);
}

describe("a policy change racing a submission", () => {
  const NARROW = `UPDATE queue SET namespaces = '{ml}' WHERE name = 'org'`;
  const WIDE = `UPDATE queue SET namespaces = '{default}' WHERE name = 'org'`;

  it("submitJob waits for a tightening of an ancestor and is refused by it", async () => {
    const r = await racingPolicyChange(NARROW, () => gql(t.url, member, SUBMIT, { input: job("team") }));
    await pgAdmin((c) => c.query(WIDE), t.db.url);
    expect(r.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    expect(r.errors?.[0]?.message).toMatch(/namespace "default" is not allowed for jobs of queue team/);
  });

  it("submitJobs waits too", async () => {
    const r = await racingPolicyChange(NARROW, () =>
      gql(t.url, member, SUBMIT_MANY, { inputs: [job("team"), job("team")] }),
    );
    await pgAdmin((c) => c.query(WIDE), t.db.url);
    expect(r.errors?.[0]?.extensions).toMatchObject({ code: "FORBIDDEN", field: "inputs[0].namespace" });
  });

  it("submitWorkload waits too", async () => {
    const r = await racingPolicyChange(NARROW, () =>
      gql(t.url, member, SUBMIT_WORKLOAD, { input: { manifest: manifest("w2"), queue: "team" } }),
    );
    await pgAdmin((c) => c.query(WIDE), t.db.url);
    expect(r.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
  });

  it("a pod group's job waits too, and is refused by the new namespaces", async () => {
    const before = await jobCount();
    const r = await racingPolicyChange(NARROW, () =>
      gqlOk<{ reportPodGroups: number }>(t.url, agent, REPORT, {
        g: [
          {
            namespace: "default",
            name: "g1",
            queue: "team",
            pods: [{ name: "g1-0", resources: { cpu: 1000 } }],
          },
        ],
      }),
    );
    await pgAdmin((c) => c.query(WIDE), t.db.url);
    expect(r.reportPodGroups).toBe(0);
    expect(await jobCount()).toBe(before);
  });

  it("a change committed before the submission is seen by it; after the widening, submits pass", async () => {
    await asAdmin(`mutation { updateQueue(name: "org", input: { namespaces: ["ml"] }) { name } }`);
    const r = await gql(t.url, member, SUBMIT, { input: job("team") });
    expect(r.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    await asAdmin(`mutation { updateQueue(name: "org", input: { namespaces: ["default"] }) { name } }`);
    await gqlOk(t.url, member, SUBMIT, { input: job("team") });
  });
});
