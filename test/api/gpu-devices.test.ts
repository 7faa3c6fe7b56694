// GPU devices over HTTP against the real server (real PostgreSQL, real Redis): an agent reports
// its nodes' device topology, real cycles choose devices for whole-GPU pods, the choice is stored
// with the pod and its BindRequest, goes out in the agent's message, comes back into the next
// snapshot for running pods, and is cleared when the pod loses its node.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bindRequestMessages } from "../../src/store/operations/dispatch.js";
import { loadSnapshot } from "../../src/store/snapshot/load-snapshot.js";
import { gql, gqlOk, registerClusterWithAgent, startTestApi, type TestApi } from "../helpers/api.js";
import { countRows, sql, tableRows } from "../helpers/db.js";
import { runCycle } from "../helpers/cycle.js";

let t: TestApi;
let agent: string;

/** 8 GPUs: NVLink domains a (0-3) and b (4-7); NUMA 0 = 0-1 and 4-5, NUMA 1 = the rest. */
const DEVICES = [0, 1, 2, 3, 4, 5, 6, 7].map((index) => ({
  index,
  nvlinkDomain: index < 4 ? "a" : "b",
  numaNode: index % 4 < 2 ? 0 : 1,
}));
const node = (over: Record<string, unknown> = {}) => ({
  name: "n1",
  capacity: { cpu: 64000, memory: "512Gi", gpu: 8 },
  gpuModel: "H100",
  gpuDevices: DEVICES,
  ...over,
});
const REPORT_NODES = 'mutation($n: [NodeReport!]!) { reportNodes(cluster: "c1", nodes: $n, complete: true) }';

interface PodView {
  name: string;
  state: string;
  node: string | null;
  gpuDevices: number[];
}

async function submit(name: string, gpu: number): Promise<string> {
  const r = await gqlOk<{ submitJob: { id: string } }>(
    t.url,
    t.adminToken,
    "mutation($i: SubmitJobInput!) { submitJob(input: $i) { id } }",
    {
      i: {
        name,
        queue: "team-a",
        cluster: "c1",
        tasks: [{ name: "w", replicas: 1, resources: { cpu: 1000, gpu } }],
      },
    },
  );
  return r.submitJob.id;
}

async function podOf(
  job: string,
): Promise<PodView & { bindRequests: { kind: string; gpuDevices: number[] }[] }> {
  const r = await gqlOk<{
    job: { pods: PodView[]; bindRequests: { kind: string; gpuDevices: number[] }[] };
  }>(
    t.url,
    t.adminToken,
    "query($id: ID!) { job(id: $id) { pods { name state node gpuDevices } bindRequests { kind gpuDevices } } }",
    {
      id: job,
    },
  );
  return { ...r.job.pods[0]!, bindRequests: r.job.bindRequests };
}

async function dbState() {
  return Promise.all([
    countRows(t.db.url, "event"),
    tableRows(t.db.url, "node"),
    tableRows(t.db.url, "cluster"),
  ]);
}

beforeAll(async () => {
  t = await startTestApi();
  await gqlOk(t.url, t.adminToken, `mutation { createQueue(input: { name: "team-a" }) { name } }`);
  agent = await registerClusterWithAgent(t);
});
afterAll(async () => t?.close());

describe("GPU devices", () => {
  it("refuses a device list that is not one entry per GPU, naming the field, changing nothing", async () => {
    const cases: [unknown, string, RegExp][] = [
      [
        node({ gpuDevices: DEVICES.slice(0, 7) }),
        "nodes[0].gpuDevices",
        /lists 7 device\(s\), the node has 8 GPU\(s\)/,
      ],
      [
        node({ gpuDevices: [...DEVICES.slice(0, 7), { index: 3 }] }),
        "nodes[0].gpuDevices[7].index",
        /device index 3 is listed twice/,
      ],
      [
        node({ gpuDevices: DEVICES.map((d) => ({ ...d, numaNode: -1 })) }),
        "nodes[0].gpuDevices[0].numaNode",
        /numaNode must not be negative/,
      ],
    ];
    for (const [n, field, message] of cases) {
      const before = await dbState();
      const r = await gql(t.url, agent, REPORT_NODES, { n: [n] });
      expect(r.errors?.[0]?.extensions, field).toMatchObject({ code: "BAD_USER_INPUT", field });
      expect(r.errors?.[0]?.message).toMatch(message);
      expect(await dbState()).toEqual(before);
    }
  });

  it("stores the reported devices with the node and loads them into the snapshot", async () => {
    expect(await gqlOk(t.url, agent, REPORT_NODES, { n: [node()] })).toEqual({ reportNodes: 1 });
    // The same report again is no change (the stored list compares equal).
    expect(await gqlOk(t.url, agent, REPORT_NODES, { n: [node()] })).toEqual({ reportNodes: 0 });
    const c = await gqlOk<{ cluster: { nodes: { gpuDevices: unknown[] }[] } }>(
      t.url,
      t.adminToken,
      `{ cluster(name: "c1") { nodes { gpuDevices { index nvlinkDomain numaNode } } } }`,
    );
    expect(c.cluster.nodes[0]!.gpuDevices).toEqual(DEVICES);
    const { snapshot } = await loadSnapshot(t.server.store, "c1");
    expect(snapshot.nodes[0]!.gpuDevices).toEqual(DEVICES);
  });

  let single: string;
  let quad: string;

  it("stores the devices a cycle chose with the pod and its BindRequest, and sends them to the agent", async () => {
    single = await submit("single", 1);
    const { bindRequests } = await runCycle(t.server.store, "c1");
    expect(bindRequests).toHaveLength(1);
    const pod = await podOf(single);
    expect(pod.state).toBe("BINDING");
    expect(pod.gpuDevices).toHaveLength(1);
    expect(pod.bindRequests).toEqual([{ kind: "BIND", gpuDevices: pod.gpuDevices }]);
    const [message] = await bindRequestMessages(t.server.store, [bindRequests[0]!.id]);
    expect(message!.gpuDevices).toEqual(pod.gpuDevices);
  });

  it("loads a running pod's devices into the next snapshot, and never hands them out again", async () => {
    await gqlOk(
      t.url,
      agent,
      'mutation($u: [PodStatusReport!]!) { reportPodStatus(cluster: "c1", updates: $u) }',
      {
        u: [{ job: single, pod: "w-0", state: "RUNNING" }],
      },
    );
    const held = (await podOf(single)).gpuDevices;
    const { snapshot } = await loadSnapshot(t.server.store, "c1");
    const running = snapshot.jobs.flatMap((j) => j.pods).find((p) => p.status === "Running")!;
    expect(running.gpuDevices).toEqual(held);

    quad = await submit("quad", 4);
    await runCycle(t.server.store, "c1");
    const four = (await podOf(quad)).gpuDevices;
    expect(four).toHaveLength(4);
    expect(four.filter((d) => held.includes(d))).toEqual([]);
    // Device topology: a 4-GPU pod gets one whole NVLink domain (the other one has a device taken).
    expect(new Set(four.map((d) => DEVICES[d]!.nvlinkDomain)).size).toBe(1);
  });

  it("clears the devices of a pod whose bind failed, and carries a pod's devices in its eviction", async () => {
    const [bind] = (await podOf(quad)).bindRequests;
    const [request] = await sql<{ id: string; gpuDevices: number[] }>(
      t.db.url,
      `SELECT id::text, gpu_devices AS "gpuDevices" FROM bind_request WHERE job_id = $1`,
      [quad],
    );
    expect(bind!.gpuDevices).toEqual(request!.gpuDevices);
    await gqlOk(
      t.url,
      agent,
      'mutation($r: [BindResultReport!]!) { reportBindResult(cluster: "c1", results: $r) }',
      {
        r: [{ bindRequest: request!.id, ok: false, message: "device busy" }],
      },
    );
    const failed = await podOf(quad);
    expect([failed.state, failed.node, failed.gpuDevices]).toEqual(["PENDING", null, []]);

    const held = (await podOf(single)).gpuDevices;
    await gqlOk(t.url, t.adminToken, "mutation($id: ID!) { cancelJob(id: $id) { state } }", { id: single });
    const cancelled = await podOf(single);
    expect(cancelled.state).toBe("RELEASING");
    expect(cancelled.bindRequests.map((b) => [b.kind, b.gpuDevices])).toEqual([
      ["BIND", held],
      ["EVICT", held],
    ]);
  });
});
