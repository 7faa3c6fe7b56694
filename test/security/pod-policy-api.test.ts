// Pod policies through the API and admission: an ADMIN sets what a cluster's pods may ask for
// beyond cpu, memory and nvidia.com/gpu and what a queue's pods may name; submitJob holds a job to
// both; admission never sends a job to a cluster whose pod policy refuses it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobById } from "../../src/store/index.js";
import { reportNodes } from "../../src/store/operations/report-nodes.js";
import { gql, gqlOk, startTestApi, type TestApi } from "../helpers/api.js";
import { gpuNode } from "../store/fixtures.js";
import { admissionPass } from "../workers/admission-pass.js";
import { countRows } from "../helpers/db.js";

let t: TestApi;
let member: string;
const admin = <T = Record<string, unknown>>(q: string, v: Record<string, unknown> = {}) =>
  gqlOk<T>(t.url, t.adminToken, q, v);
const SUBMIT = "mutation($input: SubmitJobInput!) { submitJob(input: $input) { id } }";
const template = (spec: Record<string, unknown> = {}) => ({
  spec: { containers: [{ name: "main", image: "x" }], ...spec },
});
const job = (over: Record<string, unknown> = {}, task: Record<string, unknown> = {}) => ({
  name: `j-${Math.random().toString(36).slice(2, 8)}`,
  queue: "team",
  namespace: "ml",
  tasks: [{ name: "w", replicas: 1, resources: { cpu: 1000, memory: "1Gi" }, template: template(), ...task }],
  ...over,
});

beforeAll(async () => {
  t = await startTestApi();
  await admin(`mutation { createQueue(input: { name: "team", namespaces: ["ml"] }) { name } }`);
  for (const name of ["amd", "plain"]) {
    await admin("mutation($c: String!) { registerCluster(input: { name: $c }) { name } }", { c: name });
    await reportNodes(
      t.server.store,
      { name: `agent:${name}` },
      { cluster: name, complete: true, nodes: [gpuNode("n1", 8)] },
    );
  }
  await admin(
    `mutation { registerCluster(input: { name: "amd", podPolicy: { extendedResources: ["amd.com/gpu"], resourceClaims: true } }) { name } }`,
  );
  const created = await admin<{ createToken: { secret: string } }>(
    `mutation { createToken(input: { name: "alice", role: MEMBER, queues: ["team"] }) { secret } }`,
  );
  member = created.createToken.secret;
});
afterAll(async () => t?.close());

describe("a cluster's pod policy", () => {
  it("is set by an ADMIN, shown on Cluster, and kept when labels alone change", async () => {
    await admin(
      `mutation { registerCluster(input: { name: "amd", labels: [{ key: "zone", value: "a" }] }) { name } }`,
    );
    const d = await admin<{ clusters: { name: string; podPolicy: unknown }[] }>(
      "{ clusters { name podPolicy { extendedResources resourceClaims } } }",
    );
    expect(d.clusters).toEqual([
      { name: "amd", podPolicy: { extendedResources: ["amd.com/gpu"], resourceClaims: true } },
      { name: "plain", podPolicy: { extendedResources: [], resourceClaims: false } },
    ]);
    const bad = await gql(
      t.url,
      t.adminToken,
      `mutation { registerCluster(input: { name: "plain", podPolicy: { extendedResources: ["cpu"] } }) { name } }`,
    );
    expect(bad.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      field: "input.podPolicy.extendedResources[0]",
    });
    const byMember = await gql(
      t.url,
      member,
      `mutation { registerCluster(input: { name: "plain", podPolicy: { resourceClaims: true } }) { name } }`,
    );
    expect(byMember.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
  });

  it("a job naming a cluster that does not allow its extended resource is refused, naming it", async () => {
    const input = job({ cluster: "plain" }, { extendedResources: [{ name: "amd.com/gpu", quantity: "2" }] });
    const r = await gql(t.url, member, SUBMIT, { input });
    expect(r.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      field: 'input.tasks[0].extendedResources["amd.com/gpu"]',
    });
    expect(await countRows(t.db.url, "job")).toBe(0);
  });

  it("a template asking for an extended resource its task does not declare is refused", async () => {
    const input = job(
      { cluster: "amd" },
      {
        template: {
          spec: { containers: [{ name: "main", image: "x", resources: { limits: { "amd.com/gpu": 1 } } }] },
        },
      },
    );
    const r = await gql(t.url, member, SUBMIT, { input });
    expect(r.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      field: 'input.tasks[0].template.spec.containers[0].resources.limits["amd.com/gpu"]',
    });
  });

  it("a resource claim needs the cluster's leave", async () => {
    const claims = template({ resourceClaims: [{ name: "gpu", resourceClaimName: "a100" }] });
    const r = await gql(t.url, member, SUBMIT, { input: job({ cluster: "plain" }, { template: claims }) });
    expect(r.errors?.[0]?.extensions).toMatchObject({ field: "input.tasks[0].template.spec.resourceClaims" });
    await gqlOk(t.url, member, SUBMIT, { input: job({ cluster: "amd" }, { template: claims }) });
  });

  it("a declared extended resource is stored and handed to the agent", async () => {
    const input = job({ cluster: "amd" }, { extendedResources: [{ name: "amd.com/gpu", quantity: "2" }] });
    const { submitJob } = await gqlOk<{ submitJob: { id: string } }>(t.url, member, SUBMIT, { input });
    const spec = await admin<{ jobRenderSpec: { tasks: { extendedResources: unknown }[] } }>(
      "query($j: ID!) { jobRenderSpec(job: $j) { tasks { extendedResources } } }",
      { j: submitJob.id },
    );
    expect(spec.jobRenderSpec.tasks[0]!.extendedResources).toEqual({ "amd.com/gpu": 2 });
  });

  it("admission sends a job naming no cluster only where its pod policy allows it", async () => {
    const input = job({}, { extendedResources: [{ name: "amd.com/gpu", quantity: "1" }] });
    const { submitJob } = await gqlOk<{ submitJob: { id: string } }>(t.url, member, SUBMIT, { input });
    // Without the extended resource, "plain" would win the tie on free room (nothing runs there).
    const r = await admissionPass(t.server.store);
    expect(r.assigned.find((d) => d.job === submitJob.id)?.cluster).toBe("amd");
    const refusedEverywhere = job({}, { extendedResources: [{ name: "example.com/fpga", quantity: "1" }] });
    const other = await gqlOk<{ submitJob: { id: string } }>(t.url, member, SUBMIT, {
      input: refusedEverywhere,
    });
    await admissionPass(t.server.store);
    const row = await jobById(t.server.store, other.submitJob.id);
    expect(row!.clusterName).toBeNull();
    expect(JSON.stringify(row!.pendingReason)).toMatch(/pod policy does not allow example.com\/fpga/);
  });
});

describe("a queue's allow-lists", () => {
  it("default to the default service account, no runtime or priority class, no token", async () => {
    const d = await admin<{ queue: { podPolicy: unknown } }>(
      `{ queue(name: "team") { podPolicy { serviceAccounts runtimeClasses priorityClasses serviceAccountToken } } }`,
    );
    expect(d.queue.podPolicy).toEqual({
      serviceAccounts: ["default"],
      runtimeClasses: [],
      priorityClasses: [],
      serviceAccountToken: false,
    });
  });

  it("a MEMBER cannot set them; a pod naming what they do not list is refused until an ADMIN lists it", async () => {
    const trainer = job(
      {},
      { template: template({ serviceAccountName: "trainer", runtimeClassName: "nvidia" }) },
    );
    const r = await gql(t.url, member, SUBMIT, { input: trainer });
    expect(r.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      field: "input.tasks[0].template.spec.serviceAccountName",
    });
    const byMember = await gql(
      t.url,
      member,
      `mutation { updateQueue(name: "team", input: { podPolicy: { serviceAccounts: ["trainer"] } }) { name } }`,
    );
    expect(byMember.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    await admin(
      `mutation { updateQueue(name: "team", input: { podPolicy: { serviceAccounts: ["trainer"] } }) { name } }`,
    );
    const still = await gql(t.url, member, SUBMIT, { input: trainer });
    expect(still.errors?.[0]?.extensions).toMatchObject({
      field: "input.tasks[0].template.spec.runtimeClassName",
    });
    await admin(
      `mutation { updateQueue(name: "team", input: { podPolicy: { serviceAccounts: ["trainer"], runtimeClasses: ["nvidia"] } }) { name } }`,
    );
    await gqlOk(t.url, member, SUBMIT, { input: trainer });
    const bad = await gql(
      t.url,
      t.adminToken,
      `mutation { updateQueue(name: "team", input: { podPolicy: { runtimeClasses: ["Not A Name"] } }) { name } }`,
    );
    expect(bad.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      field: "input.podPolicy.runtimeClasses[0]",
    });
    await admin(`mutation { updateQueue(name: "team", input: { podPolicy: null }) { name } }`);
  });

  it("holds for workload manifests' pod templates too", async () => {
    const manifest = {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name: "w1", namespace: "ml" },
      spec: {
        template: {
          metadata: { labels: { "fleetq.io/job-id": "someone-else" } },
          spec: { restartPolicy: "Never", containers: [{ name: "main", image: "x" }] },
        },
      },
    };
    const r = await gql(
      t.url,
      member,
      "mutation($i: SubmitWorkloadInput!) { submitWorkload(input: $i) { id } }",
      {
        i: { manifest, queue: "team" },
      },
    );
    expect(r.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      field: 'input.manifest.spec.template.metadata.labels["fleetq.io/job-id"]',
    });
  });
});
