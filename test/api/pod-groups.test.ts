// reportPodGroups over HTTP against the real server (real PostgreSQL, real Redis): pods users
// created in a cluster become one job per pod group, follow the group's membership, end with it;
// bad reports name the offending field and change nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bindRequestMessages } from "../../src/store/operations/dispatch.js";
import { gql, gqlOk, registerClusterWithAgent, startTestApi, type TestApi } from "../helpers/api.js";
import { countRows, tableRows } from "../helpers/db.js";
import { runCycle } from "../helpers/cycle.js";

let t: TestApi;
let agent: string;

const REPORT = 'mutation($g: [PodGroupReport!]!) { reportPodGroups(cluster: "c1", groups: $g) }';
const JOBS = `{ jobs(filter: { cluster: "c1" }, first: 15) { edges { node { id name namespace state minMember priority
  createdInCluster queue { name } cluster { name } pods { name state node task message resources { cpu memory gpu } }
  tasks { name replicas template nodeSelector { key values } gpuModel } } } } }`;

interface JobView {
  id: string;
  name: string;
  namespace: string;
  state: string;
  minMember: number;
  priority: number;
  createdInCluster: boolean;
  queue: { name: string };
  cluster: { name: string };
  pods: {
    name: string;
    state: string;
    node: string | null;
    task: string;
    message: string | null;
    resources: { cpu: number; memory: string; gpu: number };
  }[];
  tasks: {
    name: string;
    replicas: number;
    template: unknown;
    nodeSelector: { key: string; values: string[] }[];
    gpuModel: string | null;
  }[];
}

const pod = (name: string, over: Record<string, unknown> = {}) => ({
  name,
  resources: { cpu: 2000, memory: "8Gi", gpu: 1, gpuMemory: 0 },
  gpuModel: null,
  nodeSelector: [],
  ...over,
});
const group = (over: Record<string, unknown> = {}) => ({
  namespace: "ml",
  name: "sweep",
  queue: "team-a",
  minMember: null,
  priority: null,
  pods: [pod("sweep-0"), pod("sweep-1")],
  ...over,
});

const report = (groups: unknown[], token = agent) =>
  gql<{ reportPodGroups: number }>(t.url, token, REPORT, { g: groups });

async function jobs(): Promise<JobView[]> {
  const r = await gqlOk<{ jobs: { edges: { node: JobView }[] } }>(t.url, t.adminToken, JOBS);
  return r.jobs.edges.map((e) => e.node).reverse(); // oldest first
}

const generation = async () =>
  (
    await gqlOk<{ cluster: { generation: number } }>(
      t.url,
      t.adminToken,
      `{ cluster(name: "c1") { generation } }`,
    )
  ).cluster.generation;

async function dbState() {
  const url = t.db.url;
  return Promise.all([
    countRows(url, "event"),
    ...["job", "job_task", "pod", "cluster"].map((r) => tableRows(url, r)),
  ]);
}

beforeAll(async () => {
  t = await startTestApi();
  const admin = (q: string) => gqlOk(t.url, t.adminToken, q);
  // The pods users create in namespace ml charge org's queues.
  await admin(`mutation { createQueue(input: { name: "org", namespaces: ["ml"] }) { name } }`);
  await admin(`mutation { createQueue(input: { name: "team-a", parent: "org" }) { name } }`);
  agent = await registerClusterWithAgent(t);
  await gqlOk(
    t.url,
    agent,
    `mutation { reportNodes(cluster: "c1", complete: true, nodes: [{ name: "n1", capacity: { cpu: 64000, memory: "512Gi", gpu: 8 } }]) }`,
  );
});
afterAll(async () => t?.close());

describe("reportPodGroups", () => {
  it("makes a job of a new group, with exactly its pods and requests and no template", async () => {
    const before = await generation();
    expect((await report([group()])).data).toEqual({ reportPodGroups: 1 });
    const [job] = await jobs();
    expect(job).toMatchObject({
      name: "sweep",
      namespace: "ml",
      state: "PENDING",
      minMember: 2,
      priority: 50,
      createdInCluster: true,
      queue: { name: "team-a" },
      cluster: { name: "c1" },
    });
    expect(job!.pods.map((p) => [p.name, p.state, p.resources])).toEqual([
      ["sweep-0", "PENDING", { cpu: 2000, memory: String(8 * 2 ** 30), gpu: 1 }],
      ["sweep-1", "PENDING", { cpu: 2000, memory: String(8 * 2 ** 30), gpu: 1 }],
    ]);
    expect(job!.tasks).toHaveLength(1);
    expect(job!.tasks[0]).toMatchObject({ replicas: 2, template: null, nodeSelector: [], gpuModel: null });
    // Like a submitted job, a new one conflicts with no plan.
    expect(await generation()).toBe(before);
  });

  it("changes nothing when the same report comes again", async () => {
    const before = await dbState();
    expect((await report([group()])).data).toEqual({ reportPodGroups: 0 });
    expect(await dbState()).toEqual(before);
  });

  it("places the job with a real cycle; its BindRequests say the pods were created in the cluster (bind the existing pod)", async () => {
    const { bindRequests } = await runCycle(t.server.store, "c1");
    expect(bindRequests).toHaveLength(2);
    const messages = await bindRequestMessages(
      t.server.store,
      bindRequests.map((b) => b.id),
    );
    expect(messages.map((m) => [m.pod.name, m.node, m.job.createdInCluster, m.job.namespace]).sort()).toEqual(
      [
        ["sweep-0", "n1", true, "ml"],
        ["sweep-1", "n1", true, "ml"],
      ],
    );
    expect((await jobs())[0]!.state).toBe("ADMITTED");
  });

  it("follows the group: pods added, removed and with new requests, a new gang minimum and priority", async () => {
    const before = await generation();
    const changed = group({
      minMember: 2,
      priority: 80,
      pods: [
        pod("sweep-1", {
          resources: { cpu: 4000, memory: "8Gi", gpu: 1 },
          nodeSelector: [{ key: "zone", value: "a" }],
        }),
        pod("sweep-2"),
        pod("sweep-3"),
      ],
    });
    expect((await report([changed])).data).toEqual({ reportPodGroups: 1 });
    const [job] = await jobs();
    expect(job!.minMember).toBe(2);
    expect(job!.priority).toBe(80);
    expect(job!.pods.map((p) => [p.name, p.state, p.resources.cpu])).toEqual([
      ["sweep-1", "BINDING", 4000],
      ["sweep-2", "PENDING", 2000],
      ["sweep-3", "PENDING", 2000],
    ]);
    expect(job!.tasks.map((x) => [x.replicas, x.nodeSelector]).sort()).toEqual([
      [1, [{ key: "zone", values: ["a"] }]],
      [2, []],
    ]);
    const taskOf = new Map(job!.pods.map((p) => [p.name, p.task]));
    expect(taskOf.get("sweep-2")).toBe(taskOf.get("sweep-3"));
    expect(taskOf.get("sweep-1")).not.toBe(taskOf.get("sweep-2"));
    // The scheduler's view of this job changed: a session planned before must not commit.
    expect(await generation()).toBe(before + 1);
    expect((await report([changed])).data).toEqual({ reportPodGroups: 0 });
  });

  it("ends the job when the group is gone (pods: []), and a repeat changes nothing", async () => {
    // An empty group carries no queue that matters (the agent sends "default", which need not exist).
    expect((await report([group({ queue: "default", pods: [] })])).data).toEqual({ reportPodGroups: 1 });
    const [job] = await jobs();
    expect(job!.state).toBe("CANCELLED");
    expect(job!.pods.map((p) => [p.state, p.message])).toEqual([
      ["FAILED", "the pod group was deleted from the cluster"],
      ["FAILED", "the pod group was deleted from the cluster"],
      ["FAILED", "the pod group was deleted from the cluster"],
    ]);
    const before = await dbState();
    expect((await report([group({ queue: "default", pods: [] })])).data).toEqual({ reportPodGroups: 0 });
    expect(await dbState()).toEqual(before);
  });

  it("leaves an ended job's lingering pods with it; new pods of the group make a new job", async () => {
    const lingering = [pod("sweep-1"), pod("sweep-2"), pod("sweep-3")];
    expect((await report([group({ pods: lingering })])).data).toEqual({ reportPodGroups: 0 });
    expect((await report([group({ pods: [...lingering, pod("sweep-4")] })])).data).toEqual({
      reportPodGroups: 1,
    });
    const all = await jobs();
    expect(all.map((j) => j.state)).toEqual(["CANCELLED", "PENDING"]);
    expect(all[1]!.pods.map((p) => p.name)).toEqual(["sweep-4"]);
    expect(all[1]!.minMember).toBe(1);
    // Later reports of the same pods update that job only.
    expect((await report([group({ pods: [...lingering, pod("sweep-4")] })])).data).toEqual({
      reportPodGroups: 0,
    });
  });

  it("is open to ADMIN tokens too, as the admin", async () => {
    const r = await report([group({ name: "by-admin", pods: [pod("a-0")] })], t.adminToken);
    expect(r.data).toEqual({ reportPodGroups: 1 });
    const job = (await jobs()).find((j) => j.name === "by-admin")!;
    const events = await gqlOk<{ job: { submittedBy: string } }>(
      t.url,
      t.adminToken,
      "query($id: ID!) { job(id: $id) { submittedBy } }",
      { id: job.id },
    );
    expect(events.job.submittedBy).toBe("bootstrap-admin");
  });
});

describe("reportPodGroups: pods deleted and created again under their names (another uid)", () => {
  const rerun = (pods: [string, string][], over: Record<string, unknown> = {}) =>
    group({ name: "rerun", pods: pods.map(([name, uid]) => pod(name, { uid })), ...over });
  const rerunJobs = async () => (await jobs()).filter((j) => j.name === "rerun");
  /** Reports the group with these [name, uid] pods; what the mutation answered. */
  const reportRerun = async (pods: [string, string][], over: Record<string, unknown> = {}) =>
    (await report([rerun(pods, over)])).data;

  it("places a pod created again in an open job anew", async () => {
    expect(
      await reportRerun([
        ["r-0", "u1"],
        ["r-1", "u2"],
      ]),
    ).toEqual({ reportPodGroups: 1 });
    await runCycle(t.server.store, "c1");
    const [placed] = await rerunJobs();
    expect(placed!.pods.map((p) => p.state)).toEqual(["BINDING", "BINDING"]);
    expect(
      await reportRerun([
        ["r-0", "u3"],
        ["r-1", "u2"],
      ]),
    ).toEqual({ reportPodGroups: 1 });
    const [job] = await rerunJobs();
    expect(job!.pods.map((p) => [p.name, p.state, p.node, p.message])).toEqual([
      ["r-0", "PENDING", null, "created again in the cluster"],
      ["r-1", "BINDING", "n1", null],
    ]);
    expect(
      await reportRerun([
        ["r-0", "u3"],
        ["r-1", "u2"],
      ]),
    ).toEqual({ reportPodGroups: 0 });
  });

  it("makes a new job of a group created again under the same pod names after its job ended", async () => {
    expect(await reportRerun([], { queue: "default" })).toEqual({ reportPodGroups: 1 });
    // The ended job's own pods (same uids) lingering in the cluster change nothing …
    expect(
      await reportRerun([
        ["r-0", "u3"],
        ["r-1", "u2"],
      ]),
    ).toEqual({ reportPodGroups: 0 });
    // … the same manifest applied again (new uids) is a new job with both pods.
    expect(
      await reportRerun([
        ["r-0", "u4"],
        ["r-1", "u5"],
      ]),
    ).toEqual({ reportPodGroups: 1 });
    const [ended, again] = await rerunJobs();
    expect(ended!.state).toBe("CANCELLED");
    expect(again!.state).toBe("PENDING");
    expect(again!.pods.map((p) => [p.name, p.state])).toEqual([
      ["r-0", "PENDING"],
      ["r-1", "PENDING"],
    ]);
  });
});

describe("reportPodGroups: bad reports name the field and change nothing", () => {
  const cases: [string, unknown[], string, RegExp][] = [
    ["unknown queue", [group({ queue: "nope" })], "groups[0].queue", /queue "nope" does not exist/],
    ["non-leaf queue", [group({ queue: "org" })], "groups[0].queue", /has child queues/],
    [
      "negative cpu",
      [group({ pods: [pod("p-0", { resources: { cpu: -1 } })] })],
      "groups[0].pods[0].resources.cpu",
      /cpu must not be negative/,
    ],
    [
      "negative gpu",
      [group({ pods: [pod("p-0"), pod("p-1", { resources: { gpu: -2 } })] })],
      "groups[0].pods[1].resources.gpu",
      /gpu must not be negative/,
    ],
    [
      "duplicate pod names",
      [group({ name: "other" }), group({ name: "dup", pods: [pod("p-0"), pod("p-0")] })],
      "groups[1].pods[1].name",
      /pod "p-0" is reported twice/,
    ],
    ["the same group twice", [group(), group()], "groups[1].name", /pod group ml\/sweep is reported twice/],
    [
      "a pod name Kubernetes would refuse",
      [group({ pods: [pod("Sweep_0")] })],
      "groups[0].pods[0].name",
      /pod name must be/,
    ],
    ["gang minimum zero", [group({ minMember: 0 })], "groups[0].minMember", /minMember must be at least 1/],
  ];

  it.each(cases)("%s", async (_label, groups, field, message) => {
    const before = await dbState();
    const r = await report(groups);
    expect(r.errors).toHaveLength(1);
    expect(r.errors![0]!.extensions).toMatchObject({ code: "BAD_USER_INPUT", field });
    expect(r.errors![0]!.message).toMatch(message);
    expect(await dbState()).toEqual(before);
  });

  it("an unknown cluster is NOT_FOUND (admin), another cluster's agent FORBIDDEN", async () => {
    const before = await dbState();
    const unknown = await gql(t.url, t.adminToken, 'mutation { reportPodGroups(cluster: "c9", groups: []) }');
    expect(unknown.errors?.[0]?.extensions).toMatchObject({ code: "NOT_FOUND", field: "cluster" });
    const elsewhere = await gql(t.url, agent, 'mutation { reportPodGroups(cluster: "c2", groups: []) }');
    expect(elsewhere.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    expect(await dbState()).toEqual(before);
  });
});
