// A MEMBER cannot have the agent create any pod anywhere: the queue's namespaces and pod
// security level hold at submit, set by ADMINs and inherited down the queue tree.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobById } from "../../src/store/index.js";
import { gql, gqlOk, startTestApi, type TestApi } from "../helpers/api.js";
import { countRows } from "../helpers/db.js";

let t: TestApi;
let member: string;
const admin = <T = Record<string, unknown>>(q: string, v: Record<string, unknown> = {}) =>
  gqlOk<T>(t.url, t.adminToken, q, v);

const SUBMIT = "mutation($input: SubmitJobInput!) { submitJob(input: $input) { id } }";
const container = { name: "main", image: "pytorch", resources: {} };
const job = (
  over: Record<string, unknown> = {},
  template: unknown = { spec: { containers: [container] } },
) => ({
  name: `j-${Math.random().toString(36).slice(2, 8)}`,
  queue: "team",
  tasks: [{ name: "w", replicas: 1, resources: { gpu: 1 }, template }],
  ...over,
});

beforeAll(async () => {
  t = await startTestApi();
  await admin(`mutation { createQueue(input: { name: "org" }) { name } }`);
  await admin(`mutation { createQueue(input: { name: "team", parent: "org" }) { name } }`);
  await admin(
    `mutation { createQueue(input: { name: "infra", parent: "org", namespaces: ["kube-system"], podSecurity: PRIVILEGED }) { name } }`,
  );
  const created = await admin<{ createToken: { secret: string } }>(
    `mutation { createToken(input: { name: "alice", role: MEMBER, queues: ["team"] }) { secret } }`,
  );
  member = created.createToken.secret;
});
afterAll(async () => t?.close());

describe("queue policy: defaults and inheritance", () => {
  it("a queue shows its effective namespaces and level: its top queue's own namespace and BASELINE", async () => {
    const d = await admin<{ queues: { name: string; namespaces: string[]; podSecurity: string }[] }>(
      "{ queues { name namespaces podSecurity } }",
    );
    expect(d.queues).toEqual([
      { name: "org", namespaces: ["fleetq-org"], podSecurity: "BASELINE" },
      { name: "team", namespaces: ["fleetq-org"], podSecurity: "BASELINE" },
      { name: "infra", namespaces: ["kube-system"], podSecurity: "PRIVILEGED" },
    ]);
  });

  it("a parent's change is inherited unless the child overrides it; null inherits again", async () => {
    await admin(
      `mutation { updateQueue(name: "org", input: { namespaces: ["ml", "default"], podSecurity: RESTRICTED }) { name } }`,
    );
    const q = () =>
      admin<{ queue: { namespaces: string[]; podSecurity: string } }>(
        `{ queue(name: "team") { namespaces podSecurity } }`,
      );
    expect((await q()).queue).toEqual({ namespaces: ["ml", "default"], podSecurity: "RESTRICTED" });
    await admin(`mutation { updateQueue(name: "team", input: { podSecurity: BASELINE }) { name } }`);
    expect((await q()).queue).toEqual({ namespaces: ["ml", "default"], podSecurity: "BASELINE" });
    await admin(
      `mutation { updateQueue(name: "org", input: { namespaces: null, podSecurity: null }) { name } }`,
    );
    await admin(`mutation { updateQueue(name: "team", input: { podSecurity: null }) { name } }`);
    expect((await q()).queue).toEqual({ namespaces: ["fleetq-org"], podSecurity: "BASELINE" });
  });

  it("only an ADMIN sets them, and bad values are refused naming the field", async () => {
    const r = await gql(
      t.url,
      member,
      `mutation { updateQueue(name: "team", input: { podSecurity: PRIVILEGED }) { name } }`,
    );
    expect(r.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    const bad = await gql(
      t.url,
      t.adminToken,
      `mutation { updateQueue(name: "team", input: { namespaces: ["Kube System"] }) { name } }`,
    );
    expect(bad.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      field: "input.namespaces[0]",
    });
    const empty = await gql(
      t.url,
      t.adminToken,
      `mutation { createQueue(input: { name: "x", namespaces: [] }) { name } }`,
    );
    expect(empty.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      field: "input.namespaces",
    });
  });
});

describe("queue policy: submitJob", () => {
  it("a namespace outside the queue's list is FORBIDDEN", async () => {
    const r = await gql(t.url, member, SUBMIT, { input: job({ namespace: "kube-system" }) });
    expect(r.errors?.[0]?.extensions).toMatchObject({ code: "FORBIDDEN", field: "input.namespace" });
    expect(await countRows(t.db.url, "job")).toBe(0);
  });

  it("a privileged container breaks BASELINE: BAD_USER_INPUT at its path", async () => {
    const template = { spec: { containers: [{ ...container, securityContext: { privileged: true } }] } };
    const r = await gql(t.url, member, SUBMIT, { input: job({}, template) });
    expect(r.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      field: "input.tasks[0].template.spec.containers[0].securityContext.privileged",
    });
  });

  it("hostPID and a hostPath / volume are refused", async () => {
    const hostPid = await gql(t.url, member, SUBMIT, {
      input: job({}, { spec: { hostPID: true, containers: [container] } }),
    });
    expect(hostPid.errors?.[0]?.extensions).toMatchObject({ field: "input.tasks[0].template.spec.hostPID" });
    const hostPath = await gql(t.url, member, SUBMIT, {
      input: job(
        {},
        { spec: { containers: [container], volumes: [{ name: "root", hostPath: { path: "/" } }] } },
      ),
    });
    expect(hostPath.errors?.[0]?.extensions).toMatchObject({
      field: "input.tasks[0].template.spec.volumes[0].hostPath",
    });
    expect(await countRows(t.db.url, "job")).toBe(0);
  });

  it("a template within the level in an allowed namespace is accepted", async () => {
    await gqlOk(t.url, member, SUBMIT, { input: job({ namespace: "fleetq-org" }) });
  });

  it("a new queue's jobs do not share the default namespace: refused there, placed in fleetq-<top queue>", async () => {
    const r = await gql(t.url, member, SUBMIT, { input: job({ namespace: "default" }) });
    expect(r.errors?.[0]?.extensions).toMatchObject({ code: "FORBIDDEN", field: "input.namespace" });
    const { submitJob } = await gqlOk<{ submitJob: { id: string } }>(t.url, member, SUBMIT, { input: job() });
    const row = await jobById(t.server.store, submitJob.id);
    expect(row!.namespace).toBe("fleetq-org");
  });

  it("a PRIVILEGED queue in kube-system takes what BASELINE refuses (ADMIN-granted)", async () => {
    const template = {
      spec: { hostPID: true, containers: [{ ...container, securityContext: { privileged: true } }] },
    };
    await gqlOk(t.url, t.adminToken, SUBMIT, {
      input: job({ queue: "infra", namespace: "kube-system" }, template),
    });
  });
});
