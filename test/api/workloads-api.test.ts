// The API of Kubernetes workloads over HTTP: a manifest submitted as a job (its tasks, its queue
// from a label, the queue's default request written in and inherited down the tree), the same
// idempotency and batch rules as submitJob/submitJobs, refusals that name the manifest's field and
// store nothing, who may submit to which queue and see the manifest, and the agent's reports of
// a workload's status (only for its own cluster's workloads; a finished job stays finished).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gql, gqlOk, registerClusterWithAgent, startTestApi, type TestApi } from "../helpers/api.js";

let t: TestApi;
let agentC1 = "";
let agentC2 = "";
let member = "";
let stranger = "";
let viewer = "";

const SUBMIT = `mutation($input: SubmitWorkloadInput!) { submitWorkload(input: $input) {
  id name state minMember queue { name }
  tasks { name replicas resources { cpu memory gpu } template }
  workload { kind apiVersion name manifest } } }`;
const SUBMIT_MANY =
  "mutation($inputs: [SubmitWorkloadInput!]!) { submitWorkloads(inputs: $inputs) { id name } }";
const JOB_COUNT = `{ jobs(first: 100) { edges { node { name } } } }`;
const REPORT = `mutation($cluster: String!, $updates: [WorkloadStatusReport!]!) {
  reportWorkloadStatus(cluster: $cluster, updates: $updates) }`;

type Json = Record<string, unknown>;
// biome-ignore lint/suspicious/noExplicitAny: free-form manifests, changed in place by the tests
type Manifest = Record<string, any>;

interface Submitted {
  id: string;
  name: string;
  state: string;
  minMember: number;
  queue: { name: string };
  tasks: {
    name: string;
    replicas: number;
    resources: { cpu: number; memory: string; gpu: number };
    template: Json;
  }[];
  workload: { kind: string; apiVersion: string; name: string; manifest: Json | null };
}

const container = (resources?: Json) => ({
  name: "main",
  image: "busybox",
  ...(resources ? { resources } : {}),
});

function pyTorchJob(name: string, labels: Json = { "kueue.x-k8s.io/queue-name": "team" }): Json {
  return {
    apiVersion: "kubeflow.org/v1",
    kind: "PyTorchJob",
    metadata: { name, labels },
    spec: {
      pytorchReplicaSpecs: {
        Master: { template: { spec: { containers: [container({ limits: { "nvidia.com/gpu": 2 } })] } } },
        Worker: {
          replicas: 3,
          template: {
            spec: {
              initContainers: [container({ requests: { cpu: "4", memory: "2Gi" } })],
              containers: [
                container({ requests: { cpu: "1", memory: "8Gi" }, limits: { "nvidia.com/gpu": 2 } }),
                { ...container(), name: "side" },
              ],
            },
          },
        },
      },
    },
  };
}

const submit = (token: string, input: Json) =>
  gql<{ submitWorkload: Submitted }>(t.url, token, SUBMIT, { input });
const submitOk = async (input: Json, token = t.adminToken) => {
  const r = await submit(token, input);
  if (r.errors?.length || !r.data) throw new Error(`GraphQL errors: ${JSON.stringify(r.errors)}`);
  return r.data.submitWorkload;
};
const jobNames = async () =>
  (
    await gqlOk<{ jobs: { edges: { node: { name: string } }[] } }>(t.url, t.adminToken, JOB_COUNT)
  ).jobs.edges.map((e) => e.node.name);

beforeAll(async () => {
  t = await startTestApi();
  const admin = (query: string) => gqlOk(t.url, t.adminToken, query);
  await admin(
    `mutation { createQueue(input: { name: "org", defaultRequest: { cpu: 250, memory: "512Mi" } }) { name } }`,
  );
  await admin(
    `mutation { createQueue(input: { name: "team", parent: "org", namespaces: ["ml", "default"] }) { name } }`,
  );
  await admin(`mutation { createQueue(input: { name: "other", parent: "org" }) { name } }`);
  agentC1 = await registerClusterWithAgent(t, "c1");
  agentC2 = await registerClusterWithAgent(t, "c2");
  const token = async (input: Json) =>
    (
      await gqlOk<{ createToken: { secret: string } }>(
        t.url,
        t.adminToken,
        "mutation($input: CreateTokenInput!) { createToken(input: $input) { secret } }",
        { input },
      )
    ).createToken.secret;
  member = await token({ name: "m", role: "MEMBER", queues: ["team"] });
  stranger = await token({ name: "s", role: "MEMBER", queues: ["other"] });
  viewer = await token({ name: "v", role: "VIEWER" });
});
afterAll(async () => t?.close());

describe("submitWorkload", () => {
  it("derives the job: tasks from pod sets, effective requests, the queue from the Kueue label, the inherited default request written in", async () => {
    const job = await submitOk({ manifest: pyTorchJob("ddp") }, member);
    expect(job.queue.name).toBe("team");
    expect(job.name).toBe("ddp");
    expect(job.minMember).toBe(4);
    expect(job.tasks.map((t) => [t.name, t.replicas, t.resources])).toEqual([
      // no cpu or memory: the default inherited from org (250m, 512Mi)
      ["master", 1, { cpu: 250, memory: String(512 * 2 ** 20), gpu: 2 }],
      // max(init 4 cpu / 2Gi, containers 1 + 0.25 cpu / 8Gi + 512Mi)
      ["worker", 3, { cpu: 4000, memory: String(8.5 * 2 ** 30), gpu: 2 }],
    ]);
    expect(job.workload).toMatchObject({ kind: "PyTorchJob", apiVersion: "kubeflow.org/v1", name: "ddp" });
    const written = (job.workload.manifest as Manifest).spec.pytorchReplicaSpecs;
    expect(written.Master.template.spec.containers[0].resources).toEqual({
      limits: { "nvidia.com/gpu": 2 },
      requests: { cpu: "250m", memory: "512Mi" },
    });
    expect(written.Worker.template.spec.containers[1].resources).toEqual({
      requests: { cpu: "250m", memory: "512Mi" },
    });
    expect(job.tasks[1]!.template).toEqual(written.Worker.template);
  });

  it("a queue's own default request overrides the inherited one; null inherits again", async () => {
    const admin = (query: string) => gqlOk<Json>(t.url, t.adminToken, query);
    const view = async () =>
      (
        (await admin(`{ queue(name: "team") { defaultRequest { cpu memory } } }`)) as {
          queue: { defaultRequest: { cpu: number; memory: string } };
        }
      ).queue.defaultRequest;
    expect(await view()).toEqual({ cpu: 250, memory: String(512 * 2 ** 20) });
    await admin(
      `mutation { updateQueue(name: "team", input: { defaultRequest: { cpu: 2000, memory: "4Gi" } }) { name } }`,
    );
    expect(await view()).toEqual({ cpu: 2000, memory: String(4 * 2 ** 30) });
    const job = await submitOk({ manifest: pyTorchJob("ddp-own") });
    expect(job.tasks[0]!.resources).toEqual({ cpu: 2000, memory: String(4 * 2 ** 30), gpu: 2 });
    await admin(`mutation { updateQueue(name: "team", input: { defaultRequest: null }) { name } }`);
    expect(await view()).toEqual({ cpu: 250, memory: String(512 * 2 ** 20) });
    const top = await admin(`{ queue(name: "org") { defaultRequest { cpu memory } } }`);
    expect(top).toEqual({ queue: { defaultRequest: { cpu: 250, memory: String(512 * 2 ** 20) } } });
  });

  it("takes the queue from --queue over the labels, fleetq's label over Kueue's; none at all is refused", async () => {
    const both = pyTorchJob("labels", { "fleetq.io/queue": "team", "kueue.x-k8s.io/queue-name": "other" });
    expect((await submitOk({ manifest: both })).queue.name).toBe("team");
    expect((await submitOk({ manifest: pyTorchJob("flag"), queue: "other" })).queue.name).toBe("other");
    const none = await submit(t.adminToken, { manifest: pyTorchJob("nowhere", {}) });
    expect(none.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "input.queue" });
    expect(none.errors?.[0]?.message).toContain("fleetq.io/queue or kueue.x-k8s.io/queue-name");
  });

  it("is idempotent on the key: the same manifest gets the same job, another is a conflict", async () => {
    const input = { manifest: pyTorchJob("retry"), idempotencyKey: "ci-42" };
    const first = await submitOk(input);
    const again = await submitOk(input);
    expect(again.id).toBe(first.id);
    const other = await submit(t.adminToken, { ...input, manifest: pyTorchJob("retry-2") });
    expect(other.errors?.[0]?.extensions).toMatchObject({ code: "CONFLICT", field: "input.idempotencyKey" });
    expect((await jobNames()).filter((n) => n.startsWith("retry"))).toEqual(["retry"]);
  });

  it.each([
    [
      "an unsupported kind",
      { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web" } },
      "input.manifest.kind",
      /apps\/v1 Deployment is not a kind fleetq takes \(it takes batch\/v1 Job, jobset\.x-k8s\.io\/v1alpha2 JobSet, kubeflow\.org\/v1 PyTorchJob, kubeflow\.org\/v2beta1 MPIJob\)/,
    ],
    [
      "a JobSet of an older API version",
      { apiVersion: "jobset.x-k8s.io/v1alpha1", kind: "JobSet", metadata: { name: "old" } },
      "input.manifest.kind",
      /is not a kind fleetq takes/,
    ],
    [
      "a privileged container",
      (() => {
        const m = pyTorchJob("root") as Manifest;
        m.spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].securityContext = { privileged: true };
        return m;
      })(),
      "input.manifest.spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].securityContext.privileged",
      /privileged/,
    ],
    [
      "a namespace outside the queue's",
      {
        ...pyTorchJob("elsewhere"),
        metadata: { name: "elsewhere", namespace: "kube-system", labels: { "fleetq.io/queue": "team" } },
      },
      "input.manifest.metadata.namespace",
      /namespace "kube-system" is not allowed for jobs of queue team/,
      "FORBIDDEN",
    ],
    [
      "an unknown replica type",
      {
        ...pyTorchJob("chief"),
        spec: { pytorchReplicaSpecs: { Chief: { template: { spec: { containers: [container()] } } } } },
      },
      "input.manifest.spec.pytorchReplicaSpecs.Chief",
      /unknown replica type \(a PyTorchJob has Master, Worker\)/,
    ],
    [
      "a TPU request",
      (() => {
        const m = pyTorchJob("tpu") as Manifest;
        m.spec.pytorchReplicaSpecs.Master.template.spec.containers[0].resources = {
          limits: { "google.com/tpu": 4 },
        };
        return m;
      })(),
      'input.manifest.spec.pytorchReplicaSpecs.Master.template.spec.containers[0].resources.limits["google.com/tpu"]',
      /google\.com\/tpu is not a resource fleetq counts/,
    ],
    [
      "a name that is not a DNS label",
      { ...pyTorchJob("x"), metadata: { name: "Not_A_Name", labels: { "fleetq.io/queue": "team" } } },
      "input.manifest.metadata.name",
      /is not a DNS label/,
    ],
    ["a manifest that is not an object", "kind: Job", "input.manifest", /one Kubernetes object/],
  ])("refuses %s, naming the field, storing nothing", async (_what, manifest, field, message, code = "BAD_USER_INPUT") => {
    const before = await jobNames();
    const r = await submit(t.adminToken, { manifest });
    expect(r.errors?.[0]?.extensions).toMatchObject({ code, field });
    expect(r.errors?.[0]?.message).toMatch(message);
    expect(await jobNames()).toEqual(before);
  });

  it("refuses a namespace given twice differently", async () => {
    const manifest = {
      ...pyTorchJob("twice"),
      metadata: { name: "twice", namespace: "ml", labels: { "fleetq.io/queue": "team" } },
    };
    const r = await submit(t.adminToken, { manifest, namespace: "default" });
    expect(r.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "input.namespace" });
  });

  it("lets a MEMBER submit to its queues only, and shows the manifest to those who may see templates", async () => {
    const refused = await submit(stranger, { manifest: pyTorchJob("not-yours") });
    expect(refused.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    expect(await jobNames()).not.toContain("not-yours");
    const job = await submitOk({ manifest: pyTorchJob("mine") }, member);
    const seen = async (token: string) =>
      (
        await gqlOk<{ job: { workload: { name: string; manifest: Json | null } } }>(
          t.url,
          token,
          "query($id: ID!) { job(id: $id) { workload { name manifest } } }",
          { id: job.id },
        )
      ).job.workload;
    expect((await seen(member)).manifest).not.toBeNull();
    expect(await seen(viewer)).toEqual({ name: "mine", manifest: null });
    expect((await seen(stranger)).manifest).toBeNull();
  });
});

describe("submitWorkloads", () => {
  it("stores all or none, naming the document and the manifest's field", async () => {
    const bad = pyTorchJob("batch-bad") as Manifest;
    bad.spec.pytorchReplicaSpecs.Worker.replicas = 0;
    const r = await gql(t.url, t.adminToken, SUBMIT_MANY, {
      inputs: [{ manifest: pyTorchJob("batch-a") }, { manifest: bad }],
    });
    expect(r.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      field: "inputs[1].manifest.spec.pytorchReplicaSpecs.Worker.replicas",
    });
    expect((await jobNames()).filter((n) => n.startsWith("batch-"))).toEqual([]);
    const ok = await gqlOk<{ submitWorkloads: { name: string }[] }>(t.url, t.adminToken, SUBMIT_MANY, {
      inputs: [{ manifest: pyTorchJob("batch-a") }, { manifest: pyTorchJob("batch-b"), queue: "other" }],
    });
    expect(ok.submitWorkloads.map((j) => j.name)).toEqual(["batch-a", "batch-b"]);
  });
});

describe("reportWorkloadStatus", () => {
  const report = (token: string, cluster: string, updates: Json[]) =>
    gql<{ reportWorkloadStatus: number }>(t.url, token, REPORT, { cluster, updates });
  const state = async (id: string) =>
    (
      await gqlOk<{ job: { state: string; events: { kind: string; message: string }[] } }>(
        t.url,
        t.adminToken,
        "query($id: ID!) { job(id: $id) { state events(first: 20) { kind message } } }",
        { id },
      )
    ).job;

  it("ends the job of its cluster's workload with the object's reason, once; a restart is an event", async () => {
    const job = await submitOk({ manifest: pyTorchJob("reported"), cluster: "c1" });
    const impostor = await report(agentC2, "c1", [{ job: job.id, state: "SUCCEEDED" }]);
    expect(impostor.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    const wrongCluster = await report(agentC2, "c2", [{ job: job.id, state: "SUCCEEDED" }]);
    expect(wrongCluster.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      field: "updates[0].job",
    });

    const restarted = await report(agentC1, "c1", [
      {
        job: job.id,
        state: "RUNNING",
        reason: "Restarting",
        message: "its controller restarted it (1 restart(s))",
      },
    ]);
    expect(restarted.data?.reportWorkloadStatus).toBe(1);
    const failed = await report(agentC1, "c1", [
      { job: job.id, state: "FAILED", reason: "PyTorchJobFailed", message: "1 Worker replica(s) failed" },
    ]);
    expect(failed.data?.reportWorkloadStatus).toBe(1);
    const after = await state(job.id);
    expect(after.state).toBe("FAILED");
    expect(after.events.find((e) => e.kind === "workload.status")?.message).toContain("restarted it");
    expect(after.events.find((e) => e.kind === "job.failed")?.message).toContain(
      "PyTorchJobFailed: 1 Worker replica(s) failed",
    );
    // Said again, or said otherwise later: the job stays as it ended.
    const again = await report(agentC1, "c1", [{ job: job.id, state: "SUCCEEDED", reason: "Late" }]);
    expect(again.data?.reportWorkloadStatus).toBe(0);
    expect((await state(job.id)).state).toBe("FAILED");
  });

  it("refuses reports about a job that is not a workload", async () => {
    const { submitJob } = await gqlOk<{ submitJob: { id: string } }>(
      t.url,
      t.adminToken,
      "mutation($input: SubmitJobInput!) { submitJob(input: $input) { id } }",
      {
        input: {
          name: "plain",
          queue: "team",
          cluster: "c1",
          tasks: [{ name: "w", replicas: 1, resources: { cpu: 100 } }],
        },
      },
    );
    const r = await report(agentC1, "c1", [{ job: submitJob.id, state: "SUCCEEDED" }]);
    expect(r.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "updates[0].job" });
    expect((await state(submitJob.id)).state).not.toBe("SUCCEEDED");
  });
});
