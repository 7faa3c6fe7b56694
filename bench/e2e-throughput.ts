// End-to-end throughput: N gang jobs submitted through the GraphQL API (its own process) into 3
// simulated clusters; the workers (their own process) admit, schedule and dispatch them; three
// simulated agents (this process) bind the pods and report them Running through the API.
// Measured: pods/s from the first submission to the last pod Running, and per pod the latency
// from its job's submission to the job's RUNNING event (a gang runs all at once), p50/p90/p99.
// Each run is on a fresh database and fresh processes; the figures are medians over --runs.
//
//   npm run bench:e2e -- [--runs 3] [--jobs 500] [--pods 8] [--concurrency 32] [--named 0]
//                        [--preload-nodes 4000] [--fill 4000] [--batch 0] [--agent-concurrency N]
//
// The agents run as `fleetq agent` starts them: their backend's requests in flight, their log at
// its default level; --agent-concurrency N sets the requests in flight (a tuned run).
// --named: the share of jobs (0..1) that name their cluster; the rest go through admission.
// --preload-nodes N: one cluster instead of three, already busy: N nodes' worth of running pods
// (bench/seed-cluster.ts: at 4,000, 24,000 one-GPU and 76,000 one-CPU pods over 200 leaf queues),
// seeded with bulk SQL and held by its simulated agent from the start, plus enough empty room
// spread over extra nodes for every pod submitted; the jobs go to the seeded leaf queues.
// --fill N: one empty cluster of N nodes (8 GPUs, 128 CPUs, 1 TiB each, plus room for the warm-up)
// filled through the API with the running pods of bench/seed-cluster.ts's shape: at 4,000 nodes,
// 24,000 one-GPU and 76,000 one-CPU pods in jobs of 4–8 over 200 leaf queues (--jobs and --pods
// then only size the warm-up).
// --batch N: each client submits N jobs per `submitJobs` call instead of one `submitJob` per job
// (a pipeline that submits a whole sweep at once); 0, the default, is one job per call.
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { parseArgs } from "node:util";
import { type RunningAgent, runAgent } from "../src/agent/agent.js";
import { parseClusterFile } from "../src/agent/backends/simulated/cluster-file.js";
import { SimulatedBackend } from "../src/agent/backends/simulated/simulated-backend.js";
import { RedisEventBus } from "../src/store/redis-events.js";
import { admin, createTestDatabase, type TestDatabase } from "../test/helpers/db.js";
import { TEST_REDIS_URL, deleteTestKeys, testRedisPrefix } from "../test/helpers/redis.js";
import {
  API_READY,
  agentConcurrency,
  agentLogger,
  cpuSeconds,
  createQueue,
  cyclesRun,
  gql,
  httpAgent,
  loadAverage,
  machine,
  ownCpuSeconds,
  quantile,
  root,
  saveResult,
  startProcess,
} from "./processes.js";
import { preloadRunningPods } from "./preload.js";
import { type ClusterShape, clusterShape, leafQueue, POD, plan, seedCluster } from "./seed-cluster.js";
import { median } from "./timing.js";

const { values: opt } = parseArgs({
  options: {
    runs: { type: "string", default: "3" },
    jobs: { type: "string", default: "500" },
    pods: { type: "string", default: "8" },
    concurrency: { type: "string", default: "32" },
    named: { type: "string", default: "0" },
    "preload-nodes": { type: "string", default: "0" },
    fill: { type: "string", default: "0" },
    batch: { type: "string", default: "0" },
    "agent-concurrency": { type: "string" },
  },
});
const PRELOAD = Number(opt["preload-nodes"]);
if (!Number.isInteger(PRELOAD) || PRELOAD < 0) throw new Error("--preload-nodes must be a whole number ≥ 0");
const FILL = Number(opt.fill);
if (!Number.isInteger(FILL) || FILL < 0) throw new Error("--fill must be a whole number ≥ 0");
if (FILL && PRELOAD) throw new Error("--fill and --preload-nodes: one or the other");
const RUNS = Number(opt.runs);
const JOBS = Number(opt.jobs);
const PODS = Number(opt.pods);
const CONCURRENCY = Number(opt.concurrency);
const NAMED = Number(opt.named);
const BATCH = Number(opt.batch);
if (!Number.isInteger(BATCH) || BATCH < 0) throw new Error("--batch must be a whole number ≥ 0");
for (const [k, v] of Object.entries({ RUNS, JOBS, PODS, CONCURRENCY }))
  if (!Number.isInteger(v) || v <= 0) throw new Error(`--${k.toLowerCase()} must be a positive integer`);
const AGENT_CONCURRENCY = agentConcurrency(opt["agent-concurrency"]);
if (!(NAMED >= 0 && NAMED <= 1)) throw new Error("--named must be between 0 and 1");

/** Warm-up jobs per run (not measured): JIT, prepared statements, pools, every cluster's queues. */
const WARMUP = 6;
/** One big cluster seeded with bulk SQL (its queues and nodes; running pods when preloaded). */
const BIG = PRELOAD > 0 || FILL > 0;
const CLUSTERS = BIG ? ["big"] : ["sim-a", "sim-b", "sim-c"];

interface PlannedJob {
  replicas: number;
  resources: { cpu: number; memory: string; gpu: number };
}
const GPU_POD = { cpu: 1000, memory: "4Gi", gpu: 1 };
const PLANNED: PlannedJob[] = FILL
  ? plan({ ...clusterShape(FILL), pendingGangs: 0 }).map((j) => ({
      replicas: j.size,
      resources: {
        cpu: POD[j.kind].cpuMillis,
        memory: `${POD[j.kind].memory / 1024 ** 3}Gi`,
        gpu: j.kind === "gpu" ? 1 : 0,
      },
    }))
  : Array.from({ length: JOBS }, () => ({ replicas: PODS, resources: GPU_POD }));
const TOTAL_JOBS = PLANNED.length;
const TOTAL_PODS = PLANNED.reduce((n, j) => n + j.replicas, 0);
/** Room for every pod of a run with some to spare: each cluster takes ~half of them. */
const nodesPerCluster = Math.max(8, Math.ceil(((JOBS + WARMUP) * PODS) / 8 / 2));
const clusterYaml = `
nodeGroups:
  - { name: gpu, count: ${nodesPerCluster}, cpu: 128, memory: 1Ti, gpus: 8, gpuModel: H100, gpuMemoryMiB: 81920 }
`;
/** The big cluster: preloaded, its seeded nodes plus empty room for the run's pods (8 GPUs a
 * node); filled, the nodes of its shape empty plus room for the warm-up. */
const bigShape: ClusterShape = (() => {
  if (FILL) {
    const nodes = FILL + Math.ceil((WARMUP * PODS) / 8);
    return {
      ...clusterShape(FILL),
      nodes,
      gpuPods: 0,
      cpuPods: 0,
      pendingGangs: 0,
      nodeDigits: String(nodes - 1).length,
    };
  }
  const nodes = PRELOAD + Math.ceil(((JOBS + WARMUP) * PODS) / 8) + 8;
  return { ...clusterShape(PRELOAD), nodes, pendingGangs: 0, nodeDigits: String(nodes - 1).length };
})();
const bigYaml = `
nodeGroups:
  - { name: node, count: ${bigShape.nodes}, cpu: 128, memory: 1Ti, gpus: 8, gpuModel: A100, gpuMemoryMiB: 81920 }
`;
/** Waits until the worker's cycles that decide something stop (its count of cycles not skipped
 * unchanged over 200 ms, twice in a row); at most 10 s. */
async function cyclesAtRest(metricsPort: number): Promise<void> {
  const total = async () => [...(await cyclesRun(metricsPort)).values()].reduce((a, b) => a + b, 0);
  let quiet = 0;
  let last = await total();
  for (const deadline = Date.now() + 10_000; quiet < 2 && Date.now() < deadline; ) {
    await new Promise((r) => setTimeout(r, 200));
    const now = await total();
    quiet = now === last ? quiet + 1 : 0;
    last = now;
  }
}

const queueOf = (n: number) => (BIG ? leafQueue(n % bigShape.leafQueues) : "bench");

interface Submission {
  name: string;
  queue: string;
  cluster?: string;
  job: PlannedJob;
}

const jobInput = ({ job, ...s }: Submission) => ({
  ...s,
  tasks: [{ name: "w", replicas: job.replicas, resources: job.resources, durationSeconds: 86_400 }],
});

async function submit(url: string, token: string, s: Submission): Promise<string> {
  const { submitJob } = await gql<{ submitJob: { id: string } }>(
    url,
    token,
    "mutation($i: SubmitJobInput!) { submitJob(input: $i) { id } }",
    { i: jobInput(s) },
  );
  return submitJob.id;
}

/** Ids in the order of `batch`. */
async function submitMany(url: string, token: string, batch: Submission[]): Promise<string[]> {
  const { submitJobs } = await gql<{ submitJobs: { id: string }[] }>(
    url,
    token,
    "mutation($i: [SubmitJobInput!]!) { submitJobs(inputs: $i) { id } }",
    { i: batch.map(jobInput) },
  );
  return submitJobs.map((j) => j.id);
}

interface RunResult {
  podsPerSecond: number;
  seconds: number;
  submitSeconds: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** From the first submission to the first job running, ms. */
  first: number;
  /** CPU seconds each process spent in the measured window, per 1000 pods. */
  cpuPer1000Pods: { api: number | null; workers: number | null; agentsAndLoad: number };
}

async function oneRun(run: number): Promise<RunResult> {
  const db: TestDatabase = await createTestDatabase();
  if (BIG) {
    const t0 = performance.now();
    await admin((c) => seedCluster(c, "big", bigShape), db.url);
    console.error(`run ${run}: seeded ${bigShape.nodes} nodes in ${Math.round(performance.now() - t0)} ms`);
  }
  const prefix = testRedisPrefix("fleetq-e2e");
  const adminToken = `fq_bench_${randomBytes(16).toString("hex")}`;
  const common = { DATABASE_URL: db.url, REDIS_URL: TEST_REDIS_URL, FLEETQ_REDIS_PREFIX: prefix };
  const procs: ChildProcess[] = [];
  const agents: RunningAgent[] = [];
  const bus = new RedisEventBus(TEST_REDIS_URL, prefix);
  try {
    const api = await startProcess(
      ["serve"],
      {
        ...common,
        FLEETQ_PORT: "0",
        FLEETQ_HOST: "127.0.0.1",
        FLEETQ_ADMIN_TOKEN: adminToken,
        FLEETQ_INSECURE_REDIS: "1",
      },
      API_READY,
    );
    procs.push(api.proc);
    const url = api.match[1]!;
    await createQueue(url, adminToken);
    for (const c of CLUSTERS) {
      if (!BIG)
        await gql(
          url,
          adminToken,
          "mutation($n: String!) { registerCluster(input: { name: $n }) { name } }",
          {
            n: c,
          },
        );
      const { createToken } = await gql<{ createToken: { secret: string } }>(
        url,
        adminToken,
        "mutation($n: String!, $c: String!) { createToken(input: { name: $n, role: AGENT, cluster: $c }) { secret } }",
        { n: `agent-${c}`, c },
      );
      const backend = SimulatedBackend.fromClusterFile(
        parseClusterFile(`${c}.yaml`, BIG ? bigYaml : clusterYaml),
      );
      if (PRELOAD)
        console.error(`run ${run}: ${await preloadRunningPods(db.url, c, backend)} pods running on ${c}`);
      agents.push(
        await runAgent({
          cluster: c,
          apiUrl: url,
          token: createToken.secret,
          redis: TEST_REDIS_URL,
          queuePrefix: `${prefix}bind`,
          backend,
          register: false,
          ...(AGENT_CONCURRENCY ? { concurrency: AGENT_CONCURRENCY } : {}),
          // A long run (a big preloaded cluster) must not be taken for lost (2 min without one).
          heartbeatSeconds: BIG ? 30 : 3600,
          logger: agentLogger(),
        }),
      );
    }
    // Nodes reported: every cluster READY before the workers start.
    for (;;) {
      const { clusters } = await gql<{ clusters: { state: string }[] }>(
        url,
        adminToken,
        "{ clusters { state } }",
      );
      if (clusters.every((c) => c.state === "READY")) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const workers = await startProcess(
      ["worker", "--metrics-port", "0"],
      {
        ...common,
        FLEETQ_BIND_QUEUE_PREFIX: `${prefix}bind`,
        FLEETQ_WORKER_ID: "bench",
        FLEETQ_INSECURE_REDIS: "1",
      },
      /"metricsPort":(\d+)[^\n]*"msg":"workers running"/,
    );
    procs.push(workers.proc);

    const submittedAt = new Map<string, number>();
    const runningAt = new Map<string, number>();
    const warming = new Set<string>();
    let warmedUp!: () => void;
    const warm = new Promise<void>((r) => {
      warmedUp = r;
    });
    let allRunning!: () => void;
    const done = new Promise<void>((r) => {
      allRunning = r;
    });
    await bus.listen((e) => {
      if (e.kind !== "job.running" || !e.job) return;
      if (warming.delete(e.job)) {
        if (!warming.size) warmedUp();
        return;
      }
      if (runningAt.has(e.job)) return;
      runningAt.set(e.job, performance.now());
      if (runningAt.size === TOTAL_JOBS) allRunning();
    });
    for (let n = 0; n < WARMUP; n++)
      warming.add(
        await submit(url, adminToken, {
          name: `warm-${n}`,
          queue: queueOf(n),
          job: { replicas: PODS, resources: GPU_POD },
        }),
      );
    await warm;
    // The clock starts with the workers at rest, not while a cycle of the warm-up still runs.
    await cyclesAtRest(Number(workers.match[1]));

    const cpuBefore = [cpuSeconds(api.proc.pid), cpuSeconds(workers.proc.pid), ownCpuSeconds()];
    const start = performance.now();
    let next = 0;
    const submission = (n: number): Submission => ({
      name: `job-${n}`,
      queue: queueOf(n),
      job: PLANNED[n]!,
      ...(n < TOTAL_JOBS * NAMED ? { cluster: CLUSTERS[n % CLUSTERS.length] } : {}),
    });
    const submitter = async () => {
      while (next < TOTAL_JOBS) {
        const t = performance.now();
        if (BATCH === 0) {
          submittedAt.set(await submit(url, adminToken, submission(next++)), t);
          continue;
        }
        const batch: Submission[] = [];
        while (batch.length < BATCH && next < TOTAL_JOBS) batch.push(submission(next++));
        for (const id of await submitMany(url, adminToken, batch)) submittedAt.set(id, t);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, submitter));
    const submitSeconds = (performance.now() - start) / 1000;
    const timeout = setTimeout(() => {
      throw new Error(`run ${run}: only ${runningAt.size} of ${TOTAL_JOBS} jobs running after 10 min`);
    }, 600_000);
    await done;
    clearTimeout(timeout);
    const cpuAfter = [cpuSeconds(api.proc.pid), cpuSeconds(workers.proc.pid), ownCpuSeconds()];
    const per1000 = (i: number) =>
      cpuAfter[i] === null || cpuBefore[i] === null
        ? null
        : ((cpuAfter[i]! - cpuBefore[i]!) * 1000) / TOTAL_PODS;
    const seconds = (Math.max(...runningAt.values()) - start) / 1000;
    const latencies = [...runningAt].map(([job, at]) => at - submittedAt.get(job)!).sort((a, b) => a - b);
    return {
      podsPerSecond: TOTAL_PODS / seconds,
      seconds,
      submitSeconds,
      p50: quantile(latencies, 0.5),
      p90: quantile(latencies, 0.9),
      p99: quantile(latencies, 0.99),
      max: latencies.at(-1)!,
      first: Math.min(...runningAt.values()) - start,
      cpuPer1000Pods: { api: per1000(0), workers: per1000(1), agentsAndLoad: per1000(2)! },
    };
  } finally {
    await bus.close();
    await Promise.allSettled(agents.map((a) => a.stop()));
    for (const p of procs) p.kill("SIGKILL");
    await db.drop();
    await deleteTestKeys(prefix);
  }
}

const fmtCpu = (x: number | null) => (x === null ? "?" : x.toFixed(2));

async function main() {
  const results: RunResult[] = [];
  for (let run = 1; run <= RUNS; run++) {
    const r = await oneRun(run);
    results.push(r);
    console.log(
      `run ${run}: ${TOTAL_JOBS} jobs, ${TOTAL_PODS} pods in ${r.seconds.toFixed(2)} s (submitted in ${r.submitSeconds.toFixed(2)} s): ` +
        `${r.podsPerSecond.toFixed(0)} pods/s; submit→Running p50 ${r.p50.toFixed(0)} ms, p90 ${r.p90.toFixed(0)} ms, ` +
        `p99 ${r.p99.toFixed(0)} ms, max ${r.max.toFixed(0)} ms; first job running after ${r.first.toFixed(0)} ms; CPU s per 1000 pods: api ${fmtCpu(r.cpuPer1000Pods.api)}, ` +
        `workers ${fmtCpu(r.cpuPer1000Pods.workers)}, agents+load generator ${fmtCpu(r.cpuPer1000Pods.agentsAndLoad)}`,
    );
  }
  const summary = {
    date: new Date().toISOString(),
    machine: machine(),
    loadAverageAtEnd: loadAverage(),
    jobs: TOTAL_JOBS,
    pods: TOTAL_PODS,
    concurrency: CONCURRENCY,
    agentConcurrency: AGENT_CONCURRENCY ?? "default",
    named: NAMED,
    batch: BATCH,
    preloadNodes: PRELOAD,
    fillNodes: FILL,
    runs: results,
    median: {
      podsPerSecond: median(results.map((r) => r.podsPerSecond)),
      p50Ms: median(results.map((r) => r.p50)),
      p90Ms: median(results.map((r) => r.p90)),
      p99Ms: median(results.map((r) => r.p99)),
      firstMs: median(results.map((r) => r.first)),
      cpuPer1000Pods: {
        api: median(results.map((r) => r.cpuPer1000Pods.api ?? Number.NaN)),
        workers: median(results.map((r) => r.cpuPer1000Pods.workers ?? Number.NaN)),
        agentsAndLoad: median(results.map((r) => r.cpuPer1000Pods.agentsAndLoad)),
      },
    },
  };
  console.log(
    `median of ${RUNS}: ${summary.median.podsPerSecond.toFixed(0)} pods/s; p50 ${summary.median.p50Ms.toFixed(0)} ms, ` +
      `p90 ${summary.median.p90Ms.toFixed(0)} ms, p99 ${summary.median.p99Ms.toFixed(0)} ms; first job running after ${summary.median.firstMs.toFixed(0)} ms`,
  );
  const file = saveResult("e2e-throughput", summary);
  console.log(`written to ${path.relative(root, file)}`);
  httpAgent.destroy();
}

await main();
