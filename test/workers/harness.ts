// The whole control plane for the workers' end-to-end tests: the real API server over HTTP (real
// PostgreSQL, real Redis), simulated clusters with their real agents (runAgent), and the workers —
// in this process (startWorkers) or as child processes (`fleetq worker`) that can be killed.
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { pino } from "pino";
import { type RunningAgent, runAgent } from "../../src/agent/agent.js";
import { parseClusterFile } from "../../src/agent/backends/simulated/cluster-file.js";
import { SimulatedBackend } from "../../src/agent/backends/simulated/simulated-backend.js";
import { type RunningWorkers, startWorkers, type WorkerOptions } from "../../workers/index.js";
import { expect } from "vitest";
import { until } from "../agent/until.js";
import { gqlOk, startTestApi, type TestApi } from "../helpers/api.js";
import { sql } from "../helpers/db.js";
import { TEST_REDIS_URL, deleteTestKeys } from "../helpers/redis.js";
import type { EventData } from "../../src/store/index.js";
import { defaultBindSecret } from "../../src/protocol/bind-request.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const silent = pino({ level: process.env.WORKERS_TEST_LOG ?? "silent" });

export interface PodView {
  name: string;
  state: string;
  node: string | null;
}
export interface JobView {
  id: string;
  state: string;
  cluster: { name: string } | null;
  pods: PodView[];
  pendingReason: { message: string; clusters: { cluster: string; message: string }[] } | null;
}

export interface EventView {
  at: Date;
  kind: string;
  message: string;
  cluster: string | null;
  job: string | null;
  data: EventData | null;
}

const JOB_FIELDS =
  "id state cluster { name } pods { name state node } pendingReason { message clusters { cluster message } }";

export class ControlPlane {
  readonly agents = new Map<string, RunningAgent>();
  readonly backends = new Map<string, SimulatedBackend>();
  private readonly tokens = new Map<string, string>();
  /** How often idle agents prove themselves alive: well within the workers' clusterLostAfterMs
   * (2 min), so a long test's quiet cluster is never taken for lost. */
  heartbeatSeconds = 5;
  readonly children: ChildProcess[] = [];
  workers: RunningWorkers | null = null;

  private constructor(
    readonly api: TestApi,
    readonly redisUrl: string,
  ) {}

  /** `redisUrl`: a Redis of the test's own (one it restarts) instead of the shared one. */
  static async start(o: { redisUrl?: string } = {}): Promise<ControlPlane> {
    const redisUrl = o.redisUrl ?? TEST_REDIS_URL;
    return new ControlPlane(await startTestApi({ redisUrl }), redisUrl);
  }

  get bindQueuePrefix(): string {
    return `${this.api.redisPrefix}bind`;
  }

  admin<T = Record<string, unknown>>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
    return gqlOk<T>(this.api.url, this.api.adminToken, query, variables);
  }

  async createQueue(name: string, parent?: string): Promise<void> {
    await this.admin("mutation($i: CreateQueueInput!) { createQueue(input: $i) { name } }", {
      i: { name, parent },
    });
  }

  async setQuota(queue: string, resource: "GPU" | "CPU" | "MEMORY", deserved: number, overQuotaWeight = 1) {
    await this.admin("mutation($i: SetQueueQuotaInput!) { setQueueQuota(input: $i) { name } }", {
      i: { queue, resource, deserved, overQuotaWeight },
    });
  }

  /** Registers the cluster (through its agent) and runs a simulated agent for it on real time. */
  async addCluster(name: string, clusterYaml: string, labels: Record<string, string> = {}): Promise<void> {
    await this.admin("mutation($i: RegisterClusterInput!) { registerCluster(input: $i) { name } }", {
      i: { name, labels: Object.entries(labels).map(([key, value]) => ({ key, value })) },
    });
    const token = await this.admin<{ createToken: { secret: string } }>(
      "mutation($i: CreateTokenInput!) { createToken(input: $i) { secret } }",
      { i: { name: `agent-${name}`, role: "AGENT", cluster: name } },
    );
    this.tokens.set(name, token.createToken.secret);
    await this.runClusterAgent(name, clusterYaml);
  }

  /** Stops the cluster's agent (it stays silent until restartCluster). */
  async stopAgent(name: string): Promise<void> {
    await this.agents.get(name)?.stop();
  }

  /** Stops the cluster's agent and starts it again on a new simulated cluster of the same
   * file: a restarted `npm start`, whose simulated clusters come back empty. */
  async restartCluster(name: string, clusterYaml: string): Promise<void> {
    await this.agents.get(name)?.stop();
    await this.runClusterAgent(name, clusterYaml);
  }

  private async runClusterAgent(name: string, clusterYaml: string): Promise<void> {
    const backend = SimulatedBackend.fromClusterFile(parseClusterFile(`${name}.yaml`, clusterYaml));
    this.backends.set(name, backend);
    this.agents.set(
      name,
      await runAgent({
        cluster: name,
        apiUrl: this.api.url,
        token: this.tokens.get(name)!,
        redis: this.redisUrl,
        queuePrefix: this.bindQueuePrefix,
        backend,
        register: false,
        batchWindowMs: 20,
        heartbeatSeconds: this.heartbeatSeconds,
        logger: silent,
      }),
    );
  }

  /** Options the in-process and child workers share: this run's database and Redis namespace,
   * timers short enough for a test. */
  workerOptions(extra: Partial<WorkerOptions> = {}): WorkerOptions {
    return {
      databaseUrl: this.api.db.url,
      redisUrl: this.redisUrl,
      prefix: this.api.redisPrefix,
      bindQueuePrefix: this.bindQueuePrefix,
      cycleIntervalMs: 300,
      admissionIntervalMs: 300,
      sweepIntervalMs: 500,
      pendingDispatchGraceMs: 500,
      redispatchAfterMs: 5000,
      lockDurationMs: 5000,
      stalledIntervalMs: 1000,
      clusterLeaseMs: 3000,
      clusterLeaseRenewMs: 300,
      logger: silent,
      ...extra,
    };
  }

  async startWorkers(extra: Partial<WorkerOptions> = {}): Promise<RunningWorkers> {
    this.workers = await startWorkers(this.workerOptions(extra));
    return this.workers;
  }

  /** A worker process of its own (`fleetq worker`, the compiled CLI). Resolves once it runs;
   * `onLine` gets its stdout lines as they come (pino JSON logs). */
  async spawnWorker(
    id: string,
    env: Record<string, string> = {},
    onLine?: (line: string, child: ChildProcess) => void,
  ): Promise<ChildProcess> {
    const o = this.workerOptions();
    const child = spawn(process.execPath, ["bin/fleetq.mjs", "worker", "--metrics-port", "0"], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: o.databaseUrl,
        REDIS_URL: o.redisUrl,
        FLEETQ_REDIS_PREFIX: o.prefix!,
        FLEETQ_BIND_QUEUE_PREFIX: o.bindQueuePrefix!,
        FLEETQ_WORKER_ID: id,
        FLEETQ_CYCLE_INTERVAL_MS: String(o.cycleIntervalMs),
        FLEETQ_ADMISSION_INTERVAL_MS: String(o.admissionIntervalMs),
        FLEETQ_SWEEP_INTERVAL_MS: String(o.sweepIntervalMs),
        FLEETQ_REDISPATCH_AFTER_MS: String(o.redispatchAfterMs),
        FLEETQ_LOCK_DURATION_MS: String(o.lockDurationMs),
        FLEETQ_STALLED_INTERVAL_MS: String(o.stalledIntervalMs),
        FLEETQ_CLUSTER_LEASE_MS: String(o.clusterLeaseMs),
        FLEETQ_CLUSTER_LEASE_RENEW_MS: String(o.clusterLeaseRenewMs),
        FLEETQ_LOG_LEVEL: "info",
        // The shared test Redis has no password; the worker signs binds as this process's API does.
        FLEETQ_INSECURE_REDIS: "1",
        FLEETQ_BIND_SECRET: defaultBindSecret(),
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.children.push(child);
    let stderr = "";
    child.stderr!.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    await new Promise<void>((resolve, reject) => {
      let buffered = "";
      child.stdout!.on("data", (d: Buffer) => {
        buffered += d.toString();
        let nl = buffered.indexOf("\n");
        while (nl >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          if (line.includes('"msg":"workers running"')) resolve();
          if (process.env.WORKERS_TEST_LOG) process.stderr.write(`[${id}] ${line}\n`);
          onLine?.(line, child);
          nl = buffered.indexOf("\n");
        }
      });
      child.once("exit", (code) => reject(new Error(`worker ${id} exited with ${code}: ${stderr}`)));
    });
    return child;
  }

  async submit(input: Record<string, unknown>): Promise<string> {
    const r = await this.admin<{ submitJob: { id: string } }>(
      "mutation($i: SubmitJobInput!) { submitJob(input: $i) { id } }",
      { i: input },
    );
    return r.submitJob.id;
  }

  async job(id: string): Promise<JobView> {
    return (await this.admin<{ job: JobView }>(`query($id: ID!) { job(id: $id) { ${JOB_FIELDS} } }`, { id }))
      .job;
  }

  /** Waits until the job is in `state`; the job then. */
  async jobInState(id: string, state: string, timeoutMs = 60_000): Promise<JobView> {
    return until(async () => {
      const j = await this.job(id);
      expect(j.state).toBe(state);
      return j;
    }, timeoutMs);
  }

  async events(kind?: string): Promise<EventView[]> {
    return sql<EventView>(
      this.api.db.url,
      `SELECT at, kind, message, cluster_name AS cluster, job_id::text AS job, data FROM event
       WHERE $1::text IS NULL OR kind = $1 ORDER BY id`,
      [kind ?? null],
    );
  }

  async close(): Promise<void> {
    for (const c of this.children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
    await this.workers?.stop();
    await Promise.allSettled([...this.agents.values()].map((a) => a.stop()));
    await this.api.close();
    if (this.redisUrl === TEST_REDIS_URL) await deleteTestKeys(this.api.redisPrefix);
  }
}

/** A job of `replicas` identical pods. */
export function gpuJob(
  name: string,
  queue: string,
  replicas: number,
  gpu: number,
  extra: Record<string, unknown> = {},
) {
  return {
    name,
    queue,
    tasks: [{ name: "w", replicas, resources: { cpu: 1000, memory: "1Gi", gpu }, durationSeconds: 3600 }],
    ...extra,
  };
}

/** Two GPU nodes of four devices each: the cluster the contention tests share. */
export const TWO_NODES_OF_FOUR_GPUS = `
nodeGroups:
  - { name: gpu, count: 2, cpu: 64, memory: 512Gi, gpus: 4, gpuModel: A100, gpuMemoryMiB: 81920 }
`;

/**
 * Teams a and b under one org, four GPUs deserved each, on cluster c1 (two nodes of four),
 * with workers running (`workers`: options beside the test defaults).
 */
export async function twoTeamsOnOneCluster(workers: Partial<WorkerOptions> = {}): Promise<ControlPlane> {
  const cp = await ControlPlane.start();
  await cp.createQueue("org");
  await cp.createQueue("team-a", "org");
  await cp.createQueue("team-b", "org");
  await cp.setQuota("team-a", "GPU", 4);
  await cp.setQuota("team-b", "GPU", 4);
  await cp.addCluster("c1", TWO_NODES_OF_FOUR_GPUS);
  await cp.startWorkers(workers);
  return cp;
}

/** Submits team-a's eight one-GPU jobs to c1 and waits until all run; their ids. */
export async function fillWithTeamA(cp: ControlPlane): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < 8; i++)
    ids.push(await cp.submit({ ...gpuJob(`a-${i}`, "team-a", 1, 1), cluster: "c1" }));
  await until(async () => {
    for (const id of ids) expect((await cp.job(id)).state).toBe("RUNNING");
  }, 60_000);
  return ids;
}
