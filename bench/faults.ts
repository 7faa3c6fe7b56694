// Faults under load: the deployed topology (2 API replicas, 2 worker processes, 3 simulated
// agents, its own PostgreSQL and Redis) under a steady load, with one fault after another and
// recovery in between; after each, the checks of test/helpers/topology/checks.ts and the time
// to recover.
//   npm run bench:faults -- [--minutes N] [--rate R] [--watch S] [--only a,b] [--json]
// --minutes: the load time spread over the faults (default 10; the agent is cut off for 60 s
// from 10 minutes on, for less in shorter runs). --watch: how long after a fault the first bind
// and the backlog's recovery are watched for, the load going on meanwhile (default 60 s).
// --json: one JSON line per fault, then a summary.
// --keep: when a count is not 0, the topology stays up (its database and Redis URLs printed)
// until interrupted, to look into it. Stuck jobs are always described on stderr.
import os from "node:os";
import { parseArgs } from "node:util";
import { Checker } from "../test/helpers/topology/checks.js";
import { allFaults } from "../test/helpers/topology/faults.js";
import { failures, type FaultResult, runScenario } from "../test/helpers/topology/scenario.js";
import { Topology } from "../test/helpers/topology/topology.js";

const { values: opt } = parseArgs({
  options: {
    minutes: { type: "string", default: "10" },
    rate: { type: "string", default: "20" },
    watch: { type: "string", default: "60" },
    only: { type: "string" },
    json: { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
  },
});
const MINUTES = Number(opt.minutes);
const RATE = Number(opt.rate);
if (!(MINUTES > 0)) throw new Error(`--minutes: "${opt.minutes}" is not a positive number`);
if (!(RATE > 0)) throw new Error(`--rate: "${opt.rate}" is not a positive number`);
const WATCH = Number(opt.watch);
if (!(WATCH > 0)) throw new Error(`--watch: "${opt.watch}" is not a positive number of seconds`);

const cutOffSeconds = Math.max(10, Math.min(60, Math.round(MINUTES * 6)));
let faults = allFaults(cutOffSeconds);
if (opt.only) {
  const wanted = opt.only.split(",");
  const unknown = wanted.filter((w) => !faults.some((f) => f.name === w));
  if (unknown.length)
    throw new Error(
      `--only: no fault ${unknown.join(", ")} (faults: ${faults.map((f) => f.name).join(", ")})`,
    );
  faults = faults.filter((f) => wanted.includes(f.name));
}
const perFault = (MINUTES * 60) / faults.length;
const warmupSeconds = Math.max(3, Math.round(perFault / 2));
const afterSeconds = Math.max(3, Math.round(perFault / 2));

const say = (s: string) => process.stderr.write(`${s}\n`);
say(
  `fault run: ${faults.length} fault(s), ${RATE} submissions/s, ${warmupSeconds} s of load before and ${afterSeconds} s after each`,
);
const started = Date.now();
const topology = await Topology.start();
const stopAll = async () => {
  await checker.stop().catch(() => {});
  await topology.stop();
};
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => void stopAll().then(() => process.exit(130)));
const checker = new Checker(topology);
checker.start();
const results: FaultResult[] = [];
try {
  for (const fault of faults) {
    say(`- ${fault.name}: ${fault.what}`);
    const r = await runScenario(topology, checker, fault, {
      rate: RATE,
      warmupSeconds,
      afterSeconds,
      watchSeconds: WATCH,
      settleSeconds: 120,
      settleLimitSeconds: 900,
      log: (line) => say(`  ${line}`),
    });
    results.push(r);
    if (opt.json) {
      const { details: _, stuckJobs: __, ...row } = r;
      console.log(JSON.stringify(row));
    }
    say(
      `  ${r.submissions} submissions; lost ${r.jobsLost}, stuck ${r.jobsStuck}, bound twice ${r.podsBoundTwice}, over-committed ${r.overcommittedNodes}, partial gangs ${r.partialGangs}, limit breaches ${r.limitBreaches}, ghosts ${r.ghostPods}, strays ${r.strayPods}; first bind ${fmt(r.firstBindSeconds)} s, recovered in ${fmt(r.recoverySeconds)} s`,
    );
    for (const d of r.details) say(`    ${d}`);
    if (r.stuckJobs.length) say(`  stuck jobs:\n${r.stuckJobs.map((l) => `    ${l}`).join("\n")}`);
  }
} catch (err) {
  await stopAll();
  throw err;
}

const broken = results.flatMap((r) => failures(r).map((f) => `${r.fault} ${f}`));
if (opt.keep && broken.length) {
  await checker.stop();
  say(
    `kept up until interrupted: database ${topology.databaseUrl}, redis ${topology.redis.url}, files ${topology.dir}`,
  );
  await new Promise(() => {});
}
await stopAll();
const summary = {
  summary: true,
  faults: results.length,
  submissions: results.reduce((a, r) => a + r.submissions, 0),
  allZero: broken.length === 0,
  broken,
  maxRecoverySeconds: Math.max(...results.map((r) => r.recoverySeconds ?? Number.POSITIVE_INFINITY)),
  minutes: (Date.now() - started) / 60_000,
  loadAverage: os.loadavg(),
};
if (opt.json) console.log(JSON.stringify(summary));
else {
  console.log(table(results));
  console.log(
    `load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(", ")}`,
  );
}
process.exit(broken.length === 0 ? 0 : 1);

function fmt(s: number | null): string {
  return s === null ? "—" : s.toFixed(1);
}

function table(rows: FaultResult[]): string {
  const head =
    "| fault | submissions | jobs lost | jobs stuck | pods bound twice | over-committed nodes | partial gangs | limit breaches | ghost pods | stray pods | first bind (s) | recovery (s) |";
  const sep = `|${"---|".repeat(12)}`;
  const lines = rows.map(
    (r) =>
      `| ${r.fault} | ${r.submissions} | ${r.jobsLost} | ${r.jobsStuck} | ${r.podsBoundTwice} | ${r.overcommittedNodes} | ${r.partialGangs} | ${r.limitBreaches} | ${r.ghostPods} | ${r.strayPods} | ${fmt(r.firstBindSeconds)} | ${fmt(r.recoverySeconds)} |`,
  );
  return [head, sep, ...lines].join("\n");
}
