// The fleet benchmark (not a test): --clusters clusters of --nodes nodes each, every one seeded with
// bulk SQL in the shape of bench:cycle's busy cluster (at 4,000 nodes: 24,000 one-GPU and 76,000
// one-CPU running pods; nothing pending), held by one simulated agent each (this process, the
// agents' defaults), the API (`fleetq serve`) and --workers worker processes (`fleetq worker`), all
// with their default settings. Measured, in this order:
//   cycled          from the workers' start until every cluster has finished a cycle (s)
//   admission-1000  the admission pass of 1,000 gangs of 4 one-GPU pods submitted at once (ms)
//   admission-1     the admission pass of one more job (ms)
//   burst           2,500 gangs of 4 (10,000 pods) submitted without a cluster over the fleet:
//                   pods/s from the first submission to the last job running, and the first job
//                   running (ms after the first submission)
//   takeover        one worker killed (SIGKILL): per cluster it owned, from the kill until a job
//                   submitted to it then runs (s); from the new owner's lease to its first bind
//                   dispatched (ms), and the new owner's first cycle there (ms)
//   rss             each worker's peak RSS before the kill (GB), with the nodes it owned, and the
//                   whole fleet's processes (the API, workers, this process with the agents)
// Figures are medians over --runs (each on a freshly seeded database and fresh processes).
//
//   npm run bench:fleet -- [--clusters 10] [--nodes 4000] [--workers 3] [--runs 3] [--json]
//                          [--admission-jobs 1000] [--burst 2500] [--logs DIR]
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import { parseArgs } from "node:util";
import { type RunningAgent, runAgent } from "../src/agent/agent.js";
import { parseClusterFile } from "../src/agent/backends/simulated/cluster-file.js";
import { SimulatedBackend } from "../src/agent/backends/simulated/simulated-backend.js";
import { RedisEventBus } from "../src/store/redis-events.js";
import { admin, createTestDatabase } from "../test/helpers/db.js";
import { deleteTestKeys, TEST_REDIS_URL, testRedisPrefix } from "../test/helpers/redis.js";
import { preloadRunningPods } from "./preload.js";
import {
  API_READY,
  agentLogger,
  cpuSeconds,
  cyclesRun,
  gql,
  machine,
  ownCpuSeconds,
  saveResult,
  startProcess,
  stopProcess,
} from "./processes.js";
import { clusterShape, leafQueue, seedCluster } from "./seed-cluster.js";
import { median } from "./timing.js";

const { values: opt } = parseArgs({
  options: {
    clusters: { type: "string", default: "10" },
    nodes: { type: "string", default: "4000" },
    workers: { type: "string", default: "3" },
    runs: { type: "string", default: "3" },
    "admission-jobs": { type: "string", default: "1000" },
    burst: { type: "string", default: "2500" },
    /** A folder the workers' logs are written to (worker-<id>.log), to see where a run's time went. */
    logs: { type: "string" },
    json: { type: "boolean", default: false },
  },
});
const whole = (name: string, min: number) => {
  const v = Number(opt[name as keyof typeof opt]);
  if (!Number.isInteger(v) || v < min)
    throw new Error(`--${name}: a whole number ≥ ${min}, got ${opt[name as keyof typeof opt]}`);
  return v;
};
const CLUSTERS = Array.from({ length: whole("clusters", 1) }, (_, i) => `c${String(i).padStart(2, "0")}`);
const NODES = whole("nodes", 10);
const WORKERS = whole("workers", 2);
const RUNS = whole("runs", 1);
const SHAPE = { ...clusterShape(NODES), pendingGangs: 0, nodeDigits: String(NODES - 1).length };
const BURST_GANGS = whole("burst", 1);
const ADMISSION_JOBS = whole("admission-jobs", 1);
if (ADMISSION_JOBS > 1000) throw new Error("--admission-jobs: at most 1000 (one submitJobs call)");
const GANG = { replicas: 4, resources: { cpu: 1000, memory: "4Gi", gpu: 1 } };
// Every job submitted must fit: the seeded clusters keep 2 of each node's 8 GPUs free.
const FREE_GPUS = CLUSTERS.length * (NODES * 8 - SHAPE.gpuPods);
const ASKED_GPUS = (ADMISSION_JOBS + 1 + BURST_GANGS + CLUSTERS.length) * GANG.replicas;
if (ASKED_GPUS > FREE_GPUS)
  throw new Error(`--admission-jobs and --burst ask for ${ASKED_GPUS} GPUs; the fleet has ${FREE_GPUS} free`);
const clusterYaml = `
nodeGroups:
  - { name: node, count: ${NODES}, cpu: 128, memory: 1Ti, gpus: 8, gpuModel: A100, gpuMemoryMiB: 81920 }
`;
const log = (msg: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${msg}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface RunResult {
  cycledSeconds: number;
  admission1000Ms: number;
  /** Of which bringing the bases up to date (the owners' digests). */
  admission1000BasesMs: number;
  admission1Ms: number;
  admission1BasesMs: number;
  burstPodsPerSecond: number;
  burstFirstRunningMs: number;
  takeoverSeconds: number;
  takeoverFirstBindMs: number;
  takeoverFirstCycleMs: number;
  workerPeakRssGb: number[];
  workerNodesOwned: number[];
  gbPer1000NodesOwned: number;
  fleetRssGb: number;
}

/** VmHWM (peak RSS) and VmRSS of a process, in GB. */
function rssOf(pid: number | undefined): { peak: number; now: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { peak: kb("VmHWM") / 1024 ** 2, now: kb("VmRSS") / 1024 ** 2 };
}

interface Worker {
  id: string;
  proc: ChildProcess;
  metricsPort: number;
  /** The admission passes it logged: when, how long, how many jobs. */
  passes: { at: number; ms: number; basesMs: number; considered: number }[];
}

async function startWorker(id: string, env: Record<string, string>): Promise<Worker> {
  const started = await startProcess(
    ["worker", "--metrics-port", "0"],
    { ...env, FLEETQ_WORKER_ID: id },
    /"metricsPort":(\d+)[^\n]*"msg":"workers running"/,
  );
  const w: Worker = { id, proc: started.proc, metricsPort: Number(started.match[1]), passes: [] };
  let buffered = "";
  started.proc.stdout!.on("data", (d: Buffer) => {
    buffered += d.toString();
    for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (opt.logs) fs.appendFileSync(`${opt.logs}/worker-${id}.log`, `${line}\n`);
      if (!line.includes('"msg":"admission pass"')) continue;
      const e = JSON.parse(line) as { ms: number; basesMs: number; considered: number };
      w.passes.push({ at: performance.now(), ms: e.ms, basesMs: e.basesMs, considered: e.considered });
    }
  });
  return w;
}

async function until<T>(
  what: string,
  timeoutMs: number,
  fn: () => Promise<T | null | undefined | false>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => null);
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

async function oneRun(run: number): Promise<RunResult> {
  const db = await createTestDatabase();
  const prefix = testRedisPrefix("fleetq-fleet");
  const adminToken = `fq_bench_${randomBytes(16).toString("hex")}`;
  const common = {
    DATABASE_URL: db.url,
    REDIS_URL: TEST_REDIS_URL,
    FLEETQ_REDIS_PREFIX: prefix,
    FLEETQ_BIND_QUEUE_PREFIX: `${prefix}bind`,
    // The local Redis has no password: serve and worker refuse it without this.
    FLEETQ_INSECURE_REDIS: "1",
  };
  const procs: ChildProcess[] = [];
  const agents: RunningAgent[] = [];
  const bus = new RedisEventBus(TEST_REDIS_URL, prefix);
  try {
    let t = performance.now();
    for (const c of CLUSTERS) await admin((client) => seedCluster(client, c, SHAPE), db.url);
    log(`run ${run}: seeded ${CLUSTERS.length} × ${NODES} nodes in ${Math.round(performance.now() - t)} ms`);
    const api = await startProcess(
      ["serve"],
      { ...common, FLEETQ_PORT: "0", FLEETQ_HOST: "127.0.0.1", FLEETQ_ADMIN_TOKEN: adminToken },
      API_READY,
    );
    procs.push(api.proc);
    const url = api.match[1]!;
    t = performance.now();
    for (const c of CLUSTERS) {
      const { createToken } = await gql<{ createToken: { secret: string } }>(
        url,
        adminToken,
        "mutation($n: String!, $c: String!) { createToken(input: { name: $n, role: AGENT, cluster: $c }) { secret } }",
        { n: `agent-${c}`, c },
      );
      const backend = SimulatedBackend.fromClusterFile(parseClusterFile(`${c}.yaml`, clusterYaml));
      await preloadRunningPods(db.url, c, backend);
      agents.push(
        await runAgent({
          cluster: c,
          apiUrl: url,
          token: createToken.secret,
          redis: TEST_REDIS_URL,
          queuePrefix: `${prefix}bind`,
          backend,
          register: false,
          logger: agentLogger(),
        }),
      );
    }
    log(`run ${run}: agents running in ${Math.round(performance.now() - t)} ms`);
    await until("every cluster READY", 600_000, async () => {
      const { clusters } = await gql<{ clusters: { state: string }[] }>(
        url,
        adminToken,
        "{ clusters { state } }",
      );
      return clusters.every((c) => c.state === "READY");
    });

    // The agents' first complete reports (every pod of every cluster) are taken in before the
    // workers start: the workers' start is measured on a control plane at rest.
    await until("the API at rest", 900_000, async () => {
      const before = cpuSeconds(api.proc.pid)! + ownCpuSeconds();
      await sleep(2000);
      return cpuSeconds(api.proc.pid)! + ownCpuSeconds() - before < 0.4;
    });
    log(`run ${run}: the agents' first reports taken in after ${Math.round(performance.now() - t)} ms`);
    // The workers start together; every cluster's first cycle is a full load.
    const start = performance.now();
    const workers = await Promise.all(
      Array.from({ length: WORKERS }, (_, i) => startWorker(`w${i + 1}`, common)),
    );
    procs.push(...workers.map((w) => w.proc));
    await until("every cluster cycled", 600_000, async () => {
      const done = new Set<string>();
      for (const w of workers) for (const [c, n] of await cyclesRun(w.metricsPort)) if (n > 0) done.add(c);
      return CLUSTERS.every((c) => done.has(c));
    });
    const cycledSeconds = (performance.now() - start) / 1000;
    log(`run ${run}: every cluster cycled after ${cycledSeconds.toFixed(1)} s`);

    const running = new Map<string, number>();
    await bus.listen((e) => {
      if (e.kind === "job.running" && e.job && !running.has(e.job)) running.set(e.job, performance.now());
    });
    const submitMany = async (names: string[], cluster?: string) => {
      const { submitJobs } = await gql<{ submitJobs: { id: string }[] }>(
        url,
        adminToken,
        "mutation($i: [SubmitJobInput!]!) { submitJobs(inputs: $i) { id } }",
        {
          i: names.map((name, n) => ({
            name,
            queue: leafQueue(n % SHAPE.leafQueues),
            ...(cluster ? { cluster } : {}),
            tasks: [{ name: "w", ...GANG, durationSeconds: 3600 }],
          })),
        },
      );
      return submitJobs.map((j) => j.id);
    };
    const allRunning = (ids: string[], what: string) =>
      until(what, 900_000, async () => ids.every((id) => running.has(id)));
    const passAfter = (at: number, jobs: number) =>
      until(`an admission pass of ${jobs} job(s)`, 300_000, async () =>
        workers.flatMap((w) => w.passes).find((p) => p.at > at && p.considered >= jobs),
      );

    // Admission: 1,000 jobs at once, then one more.
    let at = performance.now();
    const thousand = await submitMany(Array.from({ length: ADMISSION_JOBS }, (_, i) => `adm-${i}`));
    const pass1000 = await passAfter(at, ADMISSION_JOBS);
    await allRunning(thousand, "the 1,000 jobs running");
    await sleep(2000);
    at = performance.now();
    const [one] = await submitMany(["adm-one"]);
    const pass1 = await passAfter(at, 1);
    await allRunning([one!], "the one job running");
    log(
      `run ${run}: admission ${pass1000.ms} ms for ${ADMISSION_JOBS} jobs (bases ${pass1000.basesMs} ms), ` +
        `${pass1.ms} ms for one (bases ${pass1.basesMs} ms)`,
    );

    // The burst: 2,500 gangs of 4 spread over the fleet.
    await sleep(2000);
    const burstStart = performance.now();
    const burst: string[] = [];
    const clients = Array.from({ length: 4 }, async (_, k) => {
      for (let b = k * 100; b < BURST_GANGS; b += 400)
        burst.push(
          ...(await submitMany(
            Array.from({ length: Math.min(100, BURST_GANGS - b) }, (_, i) => `burst-${b + i}`),
          )),
        );
    });
    await Promise.all(clients);
    await allRunning(burst, "the burst running");
    const burstEnd = Math.max(...burst.map((id) => running.get(id)!));
    const burstPodsPerSecond = (BURST_GANGS * GANG.replicas) / ((burstEnd - burstStart) / 1000);
    const burstFirstRunningMs = Math.min(...burst.map((id) => running.get(id)!)) - burstStart;
    log(
      `run ${run}: burst ${Math.round(burstPodsPerSecond)} pods/s, first running after ${Math.round(burstFirstRunningMs)} ms`,
    );

    // Memory before the kill: each worker's peak and the nodes it owns.
    const { clusters: owned } = await gql<{ clusters: { name: string; owner: { worker: string } | null }[] }>(
      url,
      adminToken,
      "{ clusters { name owner { worker } } }",
    );
    const ownerOf = new Map(owned.map((c) => [c.name, c.owner?.worker ?? null]));
    const workerPeakRssGb = workers.map((w) => rssOf(w.proc.pid).peak);
    const workerNodesOwned = workers.map(
      (w) => [...ownerOf.values()].filter((o) => o === w.id).length * NODES,
    );
    const fleetRssGb =
      rssOf(api.proc.pid).now +
      workers.reduce((s, w) => s + rssOf(w.proc.pid).now, 0) +
      rssOf(process.pid).now;

    // kill -9 of the worker owning the most clusters; a job for each of its clusters right after.
    const victim = workers.reduce((a, b) =>
      workerNodesOwned[workers.indexOf(b)]! > workerNodesOwned[workers.indexOf(a)]! ? b : a,
    );
    const itsClusters = [...ownerOf].filter(([, o]) => o === victim.id).map(([c]) => c);
    const killedAt = performance.now();
    const killedWall = new Date();
    victim.proc.kill("SIGKILL");
    const probes = await Promise.all(itsClusters.map((c) => submitMany([`after-kill-${c}`], c)));
    await allRunning(probes.flat(), "a job on each of the killed worker's clusters running");
    const takeoverSeconds = (Math.max(...probes.flat().map((id) => running.get(id)!)) - killedAt) / 1000;
    const { rows } = await admin(
      (c) =>
        c.query<{ cluster: string; first_bind_ms: number; acquired: Date }>(
          `SELECT l.cluster_name AS cluster, l.acquired_at AS acquired,
                  extract(epoch FROM (SELECT min(b.dispatched_at) FROM bind_request b
                    WHERE b.cluster_name = l.cluster_name AND b.created_at >= l.acquired_at) - l.acquired_at) * 1000 AS first_bind_ms
           FROM cluster_lease l WHERE l.cluster_name = ANY($1::text[])`,
          [itsClusters],
        ),
      db.url,
    );
    const { rows: cycles } = await admin(
      (c) =>
        c.query<{ cluster: string; message: string }>(
          `SELECT cluster_name AS cluster, message FROM event
           WHERE kind = 'cycle.completed' AND cluster_name = ANY($1::text[]) AND at >= $2 ORDER BY id`,
          [itsClusters, killedWall],
        ),
      db.url,
    );
    const firstCycleMs = itsClusters.map((c) => {
      const m = cycles.find((e) => e.cluster === c && !e.message.includes(`by ${victim.id} `));
      return m ? Number(/\] (\d+) ms/.exec(m.message)?.[1]) : Number.NaN;
    });
    log(`run ${run}: ${victim.id}'s clusters bound again ${takeoverSeconds.toFixed(1)} s after its kill`);
    return {
      cycledSeconds,
      admission1000Ms: pass1000.ms,
      admission1000BasesMs: pass1000.basesMs,
      admission1Ms: pass1.ms,
      admission1BasesMs: pass1.basesMs,
      burstPodsPerSecond,
      burstFirstRunningMs,
      takeoverSeconds,
      takeoverFirstBindMs: Math.max(...rows.map((r) => Number(r.first_bind_ms))),
      takeoverFirstCycleMs: Math.max(...firstCycleMs),
      workerPeakRssGb,
      workerNodesOwned,
      gbPer1000NodesOwned: Math.max(
        ...workerPeakRssGb.map((gb, i) =>
          workerNodesOwned[i]! ? ((gb - 0.3) * 1000) / workerNodesOwned[i]! : 0,
        ),
      ),
      fleetRssGb,
    };
  } finally {
    await Promise.allSettled(agents.map((a) => a.stop()));
    await Promise.allSettled(procs.map((p) => stopProcess(p)));
    await bus.close();
    await deleteTestKeys(prefix);
    await db.drop();
  }
}

const results: RunResult[] = [];
for (let run = 1; run <= RUNS; run++) results.push(await oneRun(run));
const med = (f: (r: RunResult) => number) => Math.round(median(results.map(f)) * 100) / 100;
const figures = {
  "cycled-s": med((r) => r.cycledSeconds),
  "admission-1000-ms": med((r) => r.admission1000Ms),
  "admission-1000-bases-ms": med((r) => r.admission1000BasesMs),
  "admission-1-ms": med((r) => r.admission1Ms),
  "admission-1-bases-ms": med((r) => r.admission1BasesMs),
  "burst-pods-per-s": med((r) => r.burstPodsPerSecond),
  "burst-first-running-ms": med((r) => r.burstFirstRunningMs),
  "takeover-s": med((r) => r.takeoverSeconds),
  "takeover-first-bind-ms": med((r) => r.takeoverFirstBindMs),
  "takeover-first-cycle-ms": med((r) => r.takeoverFirstCycleMs),
  "worker-peak-rss-gb": med((r) => Math.max(...r.workerPeakRssGb)),
  "gb-per-1000-nodes-owned": med((r) => r.gbPer1000NodesOwned),
  "fleet-rss-gb": med((r) => r.fleetRssGb),
};
const summary = {
  date: new Date().toISOString(),
  machine: machine(),
  clusters: CLUSTERS.length,
  nodes: NODES,
  workers: WORKERS,
  runs: results,
  figures,
};
if (opt.json)
  for (const [figure, value] of Object.entries(figures)) console.log(JSON.stringify({ figure, value }));
else console.log(figures);
log(`saved ${saveResult("fleet", summary)}`);
process.exit(0);
