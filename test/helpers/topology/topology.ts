// The control plane deployed the way it runs in production, every part a process of its own:
// API replicas (`fleetq serve`), worker processes (`fleetq worker`), one simulated agent per
// cluster (`fleetq agent --backend simulated`, its cluster kept in a state file so it outlives
// the agent), on a PostgreSQL and a Redis of the topology's own. Each agent reaches the API
// replicas and Redis through a TCP proxy of its own that a fault can cut.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { migrateDeploy } from "../../../src/store/migrate/index.js";
import { TcpProxy } from "../../agent/tcp-proxy.js";
import { ApiClient } from "./client.js";
import { FleetqProcess } from "./process.js";
import { freePort, OwnPostgres, OwnRedis } from "./services.js";

export interface ClusterSpec {
  name: string;
  /** The simulated cluster file (nodeGroups…). */
  yaml: string;
}

/** Three clusters of different kinds: whole GPUs with device topology, whole GPUs without, and
 * small-memory GPUs; every kind of pod (whole, fraction, GPU memory) fits on each. */
export const FAULT_CLUSTERS: ClusterSpec[] = [
  {
    name: "east",
    yaml: `nodeGroups:
  - { name: a100, count: 6, cpu: 128, memory: 1Ti, gpus: 8, gpuModel: A100, gpuMemoryMiB: 81920, gpuTopology: { devicesPerNVLinkDomain: 4 } }
`,
  },
  {
    name: "west",
    yaml: `nodeGroups:
  - { name: h100, count: 6, cpu: 128, memory: 1Ti, gpus: 8, gpuModel: H100, gpuMemoryMiB: 81920 }
`,
  },
  {
    name: "north",
    yaml: `nodeGroups:
  - { name: l40, count: 8, cpu: 64, memory: 512Gi, gpus: 4, gpuModel: L40, gpuMemoryMiB: 49152 }
`,
  },
];

/** Leaf queues of the load; the last has a GPU limit that the checks hold it to. */
export const FAULT_QUEUES = ["team-a", "team-b", "team-c"] as const;
export const LIMITED_QUEUE = "team-c";
export const LIMITED_QUEUE_GPUS = 12;

export interface TopologyOptions {
  apis?: number;
  workers?: number;
  clusters?: ClusterSpec[];
}

/** Worker timers short enough that a fault recovers in seconds, as in a small deployment. */
const WORKER_ENV = {
  FLEETQ_CYCLE_INTERVAL_MS: "500",
  FLEETQ_ADMISSION_INTERVAL_MS: "500",
  FLEETQ_SWEEP_INTERVAL_MS: "1000",
  FLEETQ_REDISPATCH_AFTER_MS: "5000",
  FLEETQ_LOCK_DURATION_MS: "5000",
  FLEETQ_STALLED_INTERVAL_MS: "2000",
  FLEETQ_CLUSTER_LEASE_MS: "3000",
  FLEETQ_CLUSTER_LEASE_RENEW_MS: "500",
};

export interface AgentSlot {
  cluster: ClusterSpec;
  proc: FleetqProcess | null;
  apiProxy: TcpProxy;
  redisProxy: TcpProxy;
  clusterFile: string;
  tokenFile: string;
  stateFile: string;
}

export class Topology {
  readonly apis: (FleetqProcess | null)[] = [];
  readonly apiPorts: number[] = [];
  readonly workers = new Map<string, FleetqProcess>();
  readonly agents = new Map<string, AgentSlot>();
  readonly client: ApiClient;
  private workerSeq = 0;

  private constructor(
    readonly pg: OwnPostgres,
    readonly redis: OwnRedis,
    readonly dir: string,
    readonly adminToken: string,
    readonly clusters: ClusterSpec[],
  ) {
    this.client = new ApiClient(() => this.apiPorts.map((p) => `http://127.0.0.1:${p}/graphql`), adminToken);
  }

  /** Starts everything; on any failure stops what did start. */
  static async start(opts: TopologyOptions = {}): Promise<Topology> {
    const dir = mkdtempSync(path.join(tmpdir(), "fleetq-topology-"));
    const pg = await OwnPostgres.start();
    let redis: OwnRedis | null = null;
    let topology: Topology | null = null;
    try {
      redis = await OwnRedis.start();
      await pg.query("CREATE DATABASE fleetq");
      await migrateDeploy({ url: pg.urlOf("fleetq") });
      topology = new Topology(
        pg,
        redis,
        dir,
        `fq_admin_${randomBytes(16).toString("hex")}`,
        opts.clusters ?? FAULT_CLUSTERS,
      );
      for (let i = 0; i < (opts.apis ?? 2); i++) {
        topology.apiPorts.push(await freePort());
        // one at a time: the first creates the admin token the others then find
        await topology.startApi(i);
      }
      await topology.setUp();
      // one at a time: on a busy machine, starting several at once only makes each slower
      for (const c of topology.agents.keys()) await topology.startAgent(c);
      for (let i = 0; i < (opts.workers ?? 2); i++) await topology.startWorker();
      return topology;
    } catch (err) {
      if (topology) await topology.stop();
      else {
        await redis?.stop();
        await pg.stop();
        rmSync(dir, { recursive: true, force: true });
      }
      throw err;
    }
  }

  get databaseUrl(): string {
    return this.pg.urlOf("fleetq");
  }

  async startApi(i: number): Promise<FleetqProcess> {
    const proc = FleetqProcess.spawn(
      `api-${i}`,
      ["serve", "--port", String(this.apiPorts[i]), "--host", "127.0.0.1"],
      {
        DATABASE_URL: this.pg.urlOf("fleetq", `fleetq-api-${i}`),
        REDIS_URL: this.redis.url,
        FLEETQ_ADMIN_TOKEN: this.adminToken,
        // This Redis has no password: serve refuses it without this.
        FLEETQ_INSECURE_REDIS: "1",
      },
    );
    this.apis[i] = proc;
    await proc.waitForLog("api listening");
    return proc;
  }

  /** A new worker process (ids w1, w2, …); its database sessions carry its id as application_name. */
  async startWorker(): Promise<FleetqProcess> {
    const id = `w${++this.workerSeq}`;
    const proc = FleetqProcess.spawn(id, ["worker", "--metrics-port", "0"], {
      DATABASE_URL: this.pg.urlOf("fleetq", `fleetq-worker-${id}`),
      REDIS_URL: this.redis.url,
      FLEETQ_INSECURE_REDIS: "1",
      FLEETQ_WORKER_ID: id,
      ...WORKER_ENV,
    });
    this.workers.set(id, proc);
    await proc.waitForLog("workers running");
    return proc;
  }

  /** Replaces a worker that died (or was killed) by a new one, keeping the count. */
  async replaceWorker(id: string): Promise<FleetqProcess> {
    const old = this.workers.get(id);
    if (old?.running) await old.kill();
    this.workers.delete(id);
    return this.startWorker();
  }

  async startAgent(cluster: string): Promise<FleetqProcess> {
    const slot = this.agents.get(cluster)!;
    const proc = FleetqProcess.spawn(
      `agent-${cluster}`,
      [
        "agent",
        `--cluster=${cluster}`,
        "--backend=simulated",
        `--cluster-file=${slot.clusterFile}`,
        `--token-file=${slot.tokenFile}`,
      ],
      {
        FLEETQ_API_URL: `http://127.0.0.1:${slot.apiProxy.port}/graphql`,
        FLEETQ_REDIS_URL: `redis://127.0.0.1:${slot.redisProxy.port}`,
        FLEETQ_SIMULATED_STATE_FILE: slot.stateFile,
        // Its per-request lines ("request done") are what faults wait for.
        FLEETQ_LOG_LEVEL: "debug",
      },
    );
    slot.proc = proc;
    await proc.waitForLog("agent running");
    return proc;
  }

  /** Every process and service stopped, the temporary folders removed; never throws. */
  async stop(): Promise<void> {
    const procs = [
      ...[...this.agents.values()].map((a) => a.proc),
      ...this.workers.values(),
      ...this.apis,
    ].filter((p): p is FleetqProcess => p !== null);
    await Promise.allSettled(procs.map((p) => p.stop(5000)));
    await Promise.allSettled(
      [...this.agents.values()].flatMap((a) => [a.apiProxy.stop(), a.redisProxy.stop()]),
    );
    await this.redis.stop().catch(() => {});
    await this.pg.stop().catch(() => {});
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Queues, quotas, clusters, agent tokens and the agents' proxies. */
  private async setUp(): Promise<void> {
    const c = this.client;
    await c.ok('mutation { createQueue(input: { name: "fleet" }) { name } }');
    for (const q of FAULT_QUEUES) {
      await c.ok("mutation($i: CreateQueueInput!) { createQueue(input: $i) { name } }", {
        i: { name: q, parent: "fleet" },
      });
    }
    await c.setQuota({ queue: LIMITED_QUEUE, resource: "GPU", deserved: 4, limit: LIMITED_QUEUE_GPUS });
    for (const cluster of this.clusters) {
      await c.ok("mutation($i: RegisterClusterInput!) { registerCluster(input: $i) { name } }", {
        i: { name: cluster.name },
      });
      const token = await c.ok<{ createToken: { secret: string } }>(
        "mutation($i: CreateTokenInput!) { createToken(input: $i) { secret } }",
        { i: { name: `agent-${cluster.name}`, role: "AGENT", cluster: cluster.name } },
      );
      const slot: AgentSlot = {
        cluster,
        proc: null,
        apiProxy: await TcpProxy.balance(this.apiPorts.map((port) => ({ host: "127.0.0.1", port }))),
        redisProxy: await TcpProxy.start("127.0.0.1", this.redis.port),
        clusterFile: path.join(this.dir, `${cluster.name}.yaml`),
        tokenFile: path.join(this.dir, `${cluster.name}.token`),
        stateFile: path.join(this.dir, `${cluster.name}.state.json`),
      };
      writeFileSync(slot.clusterFile, cluster.yaml);
      writeFileSync(slot.tokenFile, token.createToken.secret);
      this.agents.set(cluster.name, slot);
    }
  }
}
