// GPU devices end to end: a simulated cluster whose nodes report their device topology, the
// agent against the real API server (real PostgreSQL, real Redis), real scheduling cycles, the
// outbox dispatched onto the bind queue. The simulated cluster refuses any bind naming a device
// another pod holds, so a device booked twice would show up as a failed BindRequest; after every
// round the devices the cluster holds must be exactly those the database says its pods hold.
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseClusterFile } from "../../src/agent/backends/simulated/cluster-file.js";
import { SimulatedBackend } from "../../src/agent/backends/simulated/simulated-backend.js";
import { countRows, sql } from "../helpers/db.js";
import { type ApiAgent, startApiAgent } from "./api-agent.js";
import { until } from "./until.js";

const CLUSTER = `
nodeGroups:
  - { name: dgx, count: 2, cpu: 96, memory: 1Ti, gpus: 8, gpuModel: H100, gpuMemoryMiB: 81920,
      gpuTopology: { devicesPerNVLinkDomain: 4, devicesPerNumaNode: 2 } }
`;

/** GPUs per pod and how long it runs (s): whole-GPU pods of every size, and two half GPUs. */
const JOBS: [number, number][] = [
  [4, 30],
  [1, 10],
  [2, 20],
  [3, 10],
  [1, 30],
  [4, 10],
  [2, 10],
  [0.5, 20],
  [0.5, 10],
  [3, 20],
  [1, 20],
  [2, 30],
  [4, 20],
  [1, 10],
];

describe("GPU devices end to end (simulated cluster)", () => {
  let env: ApiAgent;
  const clock = {
    t: Date.now(),
    now() {
      return this.t;
    },
  };
  const backend = SimulatedBackend.fromClusterFile(parseClusterFile("c1.yaml", CLUSTER), clock);
  const url = () => env.api.db.url;

  const admin = <T>(query: string, variables: Record<string, unknown> = {}) => env.admin<T>(query, variables);
  const dispatch = () => env.dispatch();
  const cycle = () => env.cycle();

  /** Who holds each device according to the database: running or binding pods. */
  async function heldInDatabase(node: string): Promise<Map<number, string>> {
    const pods = await sql<{ jobId: string; name: string; gpuDevices: number[]; gpuGroups: string[] }>(
      url(),
      `SELECT job_id::text AS "jobId", name, gpu_devices AS "gpuDevices", gpu_groups AS "gpuGroups" FROM pod
       WHERE node_name = $1 AND state IN ('BINDING', 'RUNNING')`,
      [node],
    );
    const held = new Map<number, string>();
    const take = (index: number, holder: string) => {
      const other = held.get(index);
      // Two pods on one device in the database: the double booking this test guards against.
      expect(
        other === undefined || other === holder,
        `device ${index} of ${node}: ${other} and ${holder}`,
      ).toBe(true);
      held.set(index, holder);
    };
    for (const p of pods) {
      for (const index of p.gpuDevices) take(index, `${p.jobId}/${p.name}`);
      for (const group of p.gpuGroups) take(Number(group), `group:${group}`);
    }
    return held;
  }

  /** Everything sent was carried out and reported: no request open, the pods' states in. */
  async function settled(): Promise<void> {
    await until(async () => {
      expect(await countRows(url(), "bind_request", "state IN ('PENDING', 'DISPATCHED')")).toBe(0);
      expect(await countRows(url(), "pod", "state IN ('BINDING', 'RUNNING')")).toBe(
        backend.cluster.runningPodCount,
      );
      expect(await countRows(url(), "pod", "state = 'BINDING'")).toBe(0);
    });
  }

  beforeAll(async () => {
    env = await startApiAgent({
      label: "fleetq-agent-devices",
      queue: "team-a",
      backend: backend,
      logger: pino({ level: process.env.AGENT_TEST_LOG ?? "silent" }),
    });
  });

  afterAll(async () => {
    await env?.close();
  });

  it("reports the nodes' devices", async () => {
    await until(async () => {
      const { cluster } = await admin<{ cluster: { nodes: { gpuDevices: { index: number }[] }[] } }>(
        `{ cluster(name: "c1") { nodes { gpuDevices { index nvlinkDomain numaNode } } } }`,
      );
      expect(cluster.nodes.map((n) => n.gpuDevices.length)).toEqual([8, 8]);
    });
  });

  it("never books a device twice while jobs of every size come and go", async () => {
    for (const [i, [gpu, seconds]] of JOBS.entries()) {
      await admin("mutation($i: SubmitJobInput!) { submitJob(input: $i) { id } }", {
        i: {
          name: `j${i}`,
          queue: "team-a",
          cluster: "c1",
          tasks: [{ name: "w", replicas: 1, resources: { cpu: 1000, gpu }, durationSeconds: seconds }],
        },
      });
    }
    let rounds = 0;
    for (;;) {
      await cycle();
      await dispatch();
      await settled();
      for (const node of ["dgx-0", "dgx-1"])
        expect(backend.cluster.deviceHolders(node), `${node}, round ${rounds}`).toEqual(
          await heldInDatabase(node),
        );
      const open = await countRows(url(), "job", "state IN ('PENDING', 'ADMITTED', 'RUNNING')");
      if (open === 0) break;
      expect(++rounds, "rounds").toBeLessThan(20);
      clock.t += 10_000;
      backend.tick();
      await settled();
    }
    // Every bind was accepted: no device was ever named while another pod held it.
    const failed = await sql<{ lastError: string }>(
      url(),
      `SELECT last_error AS "lastError" FROM bind_request WHERE state = 'FAILED'`,
    );
    expect(failed.map((b) => b.lastError)).toEqual([]);
    const whole = await sql<{ gpus: number; gpuDevices: number[] }>(
      url(),
      `SELECT gpus, gpu_devices AS "gpuDevices" FROM pod WHERE gpus > 0`,
    );
    expect(whole.every((p) => p.gpuDevices.length === p.gpus)).toBe(true);
    // Shared pods' groups are named by the device they share, so the cluster checked those too.
    const shared = await sql<{ gpuGroups: string[] }>(
      url(),
      `SELECT gpu_groups AS "gpuGroups" FROM pod WHERE gpu_fraction > 0`,
    );
    expect(shared.map((p) => p.gpuGroups.every((g) => /^\d+$/.test(g)))).toEqual([true, true]);
    expect(await countRows(url(), "job", "state = 'SUCCEEDED'")).toBe(JOBS.length);
  });
});
