// The API of training jobs over HTTP: restart policies and rendezvous ports checked field by
// field (and a refused spec stores nothing), the warning on a template that sets a rendezvous
// variable itself, renderJob refusing what submitJob refuses, and who may read a job's render
// input (ADMIN, or the AGENT of the job's cluster).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gql, gqlOk, registerClusterWithAgent, startTestApi, type TestApi } from "../helpers/api.js";
import { countRows } from "../helpers/db.js";

let t: TestApi;
let agentC1 = "";
let agentC2 = "";
let member = "";
let viewer = "";
const SUBMIT = "mutation($input: SubmitJobInput!) { submitJob(input: $input) { id } }";
const RENDER =
  "query($input: SubmitJobInput!, $cluster: String) { renderJob(input: $input, cluster: $cluster) }";
const TEMPLATE = { spec: { containers: [{ name: "main", image: "busybox", command: ["true"] }] } };
const spec = (over: Record<string, unknown> = {}) => ({
  name: "train",
  queue: "team",
  cluster: "c1",
  tasks: [{ name: "w", replicas: 2, resources: { cpu: 1000, gpu: 1 }, template: TEMPLATE }],
  ...over,
});

beforeAll(async () => {
  t = await startTestApi();
  await gqlOk(t.url, t.adminToken, `mutation { createQueue(input: { name: "team" }) { name } }`);
  agentC1 = await registerClusterWithAgent(t, "c1");
  agentC2 = await registerClusterWithAgent(t, "c2");
  const token = async (input: Record<string, unknown>) =>
    (
      await gqlOk<{ createToken: { secret: string } }>(
        t.url,
        t.adminToken,
        "mutation($input: CreateTokenInput!) { createToken(input: $input) { secret } }",
        { input },
      )
    ).createToken.secret;
  member = await token({ name: "m", role: "MEMBER", queues: ["team"] });
  viewer = await token({ name: "v", role: "VIEWER" });
});
afterAll(async () => t?.close());

describe("restart policies and rendezvous ports", () => {
  it.each([
    [{ restartPolicy: { maxRestarts: -1 } }, "input.restartPolicy.maxRestarts", /must not be negative/],
    [{ restartPolicy: { maxRestarts: 1001 } }, "input.restartPolicy.maxRestarts", /at most 1000/],
    [
      { restartPolicy: { maxRestarts: 1, backoffSeconds: -5 } },
      "input.restartPolicy.backoffSeconds",
      /negative/,
    ],
    [
      { restartPolicy: { maxRestarts: 1, onExitCodes: [0] } },
      "input.restartPolicy.onExitCodes[0]",
      /0 is success/,
    ],
    [{ restartPolicy: { maxRestarts: 1, onExitCodes: [3, 3] } }, "input.restartPolicy.onExitCodes", /twice/],
    [
      { restartPolicy: { maxRestarts: 1, onExitCodes: [] } },
      "input.restartPolicy.onExitCodes",
      /at least one/,
    ],
    [{ rendezvousPort: 0 }, "input.rendezvousPort", /1 to 65535/],
    [{ rendezvousPort: 70000 }, "input.rendezvousPort", /1 to 65535/],
  ])("refuses %j naming the field, storing nothing", async (over, field, message) => {
    const jobs = await countRows(t.db.url, "job");
    for (const query of [SUBMIT, RENDER]) {
      const r = await gql(t.url, t.adminToken, query, { input: spec(over) });
      expect(r.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field });
      expect(r.errors?.[0]?.message).toMatch(message);
    }
    expect(await countRows(t.db.url, "job")).toBe(jobs);
  });

  it("stores the policy with its defaults and shows the attempt", async () => {
    const { submitJob } = await gqlOk<{ submitJob: { id: string } }>(t.url, member, SUBMIT, {
      input: spec({
        name: "kept",
        restartPolicy: { maxRestarts: 3, onExitCodes: [143, 137] },
        rendezvousPort: 23456,
      }),
    });
    const { job } = await gqlOk<{ job: Record<string, unknown> }>(
      t.url,
      member,
      "query($id: ID!) { job(id: $id) { restarts attempt rendezvousPort restartPolicy { maxRestarts backoffSeconds onExitCodes } } }",
      { id: submitJob.id },
    );
    expect(job).toEqual({
      restarts: 0,
      attempt: 1,
      rendezvousPort: 23456,
      restartPolicy: { maxRestarts: 3, backoffSeconds: 10, onExitCodes: [137, 143] },
    });
  });
});

describe("warnings and renderJob", () => {
  it("warns when a template sets a rendezvous variable itself; its value is kept", async () => {
    const template = {
      spec: {
        containers: [{ name: "main", image: "busybox", env: [{ name: "MASTER_ADDR", value: "my-host" }] }],
      },
    };
    const input = spec({
      name: "own",
      tasks: [{ name: "w", replicas: 2, resources: { cpu: 1000 }, template }],
    });
    const { submitJob } = await gqlOk<{ submitJob: { warnings: string[] } }>(
      t.url,
      member,
      "mutation($input: SubmitJobInput!) { submitJob(input: $input) { warnings } }",
      { input },
    );
    expect(submitJob.warnings).toEqual([
      'tasks[0].template: container "main" sets MASTER_ADDR itself; its value is kept instead of fleetq\'s',
    ]);
    const { renderJob } = await gqlOk<{ renderJob: string }>(t.url, member, RENDER, { input });
    expect(renderJob).toContain("value: my-host");
    expect(renderJob.match(/name: MASTER_ADDR/g)).toHaveLength(2);
  });

  it("refuses what submitJob refuses: the queue's pod security, an unknown cluster or queue", async () => {
    const privileged = {
      spec: { containers: [{ name: "main", image: "x", securityContext: { privileged: true } }] },
    };
    const bad = await gql(t.url, member, RENDER, {
      input: spec({ tasks: [{ name: "w", replicas: 1, resources: { cpu: 1000 }, template: privileged }] }),
    });
    expect(bad.errors?.[0]?.extensions?.field).toBe(
      "input.tasks[0].template.spec.containers[0].securityContext.privileged",
    );
    const cluster = await gql(t.url, member, RENDER, { input: spec(), cluster: "nowhere" });
    expect(cluster.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "cluster" });
    const queue = await gql(t.url, member, RENDER, { input: spec({ queue: "nope" }) });
    expect(queue.errors?.[0]?.extensions).toMatchObject({ code: "NOT_FOUND", field: "input.queue" });
    // Rendering changes nothing, whoever asks.
    const jobs = await countRows(t.db.url, "job");
    const ok = await gql<{ renderJob: string }>(t.url, viewer, RENDER, { input: spec() });
    expect(ok.data?.renderJob).toContain("kind: Service");
    expect(await countRows(t.db.url, "job")).toBe(jobs);
  });
});

describe("jobRenderSpec", () => {
  it("is for ADMIN and the AGENT of the job's cluster only, in the order of the spec", async () => {
    const { submitJob } = await gqlOk<{ submitJob: { id: string } }>(t.url, t.adminToken, SUBMIT, {
      input: spec({
        name: "ordered",
        tasks: [
          { name: "zeta", replicas: 1, resources: { cpu: 1000 }, template: TEMPLATE },
          { name: "alpha", replicas: 2, resources: { cpu: 1000, gpu: 1 }, template: TEMPLATE },
        ],
      }),
    });
    const QUERY =
      "query($job: ID!) { jobRenderSpec(job: $job) { job minMember tasks { name replicas resources { gpu } } } }";
    for (const [who, token, code] of [
      ["member", member, "FORBIDDEN"],
      ["viewer", viewer, "FORBIDDEN"],
      ["another cluster's agent", agentC2, "FORBIDDEN"],
    ] as const) {
      const r = await gql(t.url, token, QUERY, { job: submitJob.id });
      expect(r.errors?.[0]?.extensions?.code, who).toBe(code);
    }
    for (const token of [t.adminToken, agentC1]) {
      const { jobRenderSpec } = await gqlOk<{ jobRenderSpec: Record<string, unknown> }>(t.url, token, QUERY, {
        job: submitJob.id,
      });
      expect(jobRenderSpec).toEqual({
        job: submitJob.id,
        minMember: 3,
        tasks: [
          { name: "zeta", replicas: 1, resources: { gpu: 0 } },
          { name: "alpha", replicas: 2, resources: { gpu: 1 } },
        ],
      });
    }
  });
});
