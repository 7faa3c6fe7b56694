// Checking an outcome against a scenario's `expect` block (the rules of
// scenario-format.md, "Meaning of the expected outcome").
import { isAllocated } from "../core/index.js";
import type { Outcome } from "./outcome.js";
import type { ExpectEntry, Scenario } from "./scenario.js";

const near = (a: number, b: number) => Math.abs(a - b) < 1e-6;

interface TaskView {
  name: string;
  status: string;
  node: string | null;
  gpus: number;
  cpuMillis: number;
  memory: number;
}

export function checkOutcome(
  s: Scenario,
  o: Outcome,
  requests: Map<string, { cpuMillis: number; memory: number }>,
  accepted: Map<string, number>,
): string[] {
  const e = s.expect;
  if (!e) return [];
  const failures: string[] = [];
  const view = (name: string): TaskView => {
    const t = o.tasks[name]!;
    const r = requests.get(name) ?? { cpuMillis: 0, memory: 0 };
    return { name, status: t.status, node: t.node, gpus: t.gpus, ...r };
  };
  const byJob = new Map<string, TaskView[]>();
  for (const name of Object.keys(o.tasks)) {
    const job = o.tasks[name]!.job;
    const l = byJob.get(job) ?? [];
    l.push(view(name));
    byJob.set(job, l);
  }
  const checkEntry = (what: string, tasks: TaskView[], x: ExpectEntry, job: string) => {
    if (x.status !== undefined)
      for (const t of tasks)
        if (t.status !== x.status)
          failures.push(`${what}: task ${t.name} is ${t.status}, expected ${x.status}`);
    if (x.node)
      for (const t of tasks)
        if (t.node !== x.node)
          failures.push(`${what}: task ${t.name} is on ${t.node ?? "no node"}, expected ${x.node}`);
    const sum = (f: (t: TaskView) => number) => tasks.reduce((a, t) => a + f(t), 0);
    if (
      x.gpus != null &&
      !near(
        sum((t) => t.gpus),
        x.gpus,
      )
    )
      failures.push(`${what}: requests ${sum((t) => t.gpus)} GPUs, expected ${x.gpus}`);
    if (
      x.cpuMillis &&
      !near(
        sum((t) => t.cpuMillis),
        x.cpuMillis,
      )
    )
      failures.push(`${what}: requests ${sum((t) => t.cpuMillis)} cpuMillis, expected ${x.cpuMillis}`);
    if (
      x.memory &&
      !near(
        sum((t) => t.memory),
        x.memory,
      )
    )
      failures.push(`${what}: requests ${sum((t) => t.memory)} memory, expected ${x.memory}`);
    if (x.gpusAccepted) {
      const got = what.startsWith("job")
        ? (o.jobs[job]?.gpusAccepted ?? 0)
        : (accepted.get(tasks[0]!.name) ?? 0);
      if (!near(got, x.gpusAccepted))
        failures.push(`${what}: accepted ${got} GPUs, expected ${x.gpusAccepted}`);
    }
    const started = o.jobs[job]?.lastStartSecondsAgo ?? null;
    if (x.status && isAllocated(x.status) && started === null)
      failures.push(`${what}: job ${job} has no last start time`);
    if (x.lastStartOlderThanSeconds != null && (started === null || started < x.lastStartOlderThanSeconds))
      failures.push(
        `${what}: job ${job} last started ${started ?? "never"}s ago, expected at least ${x.lastStartOlderThanSeconds}s`,
      );
  };
  for (const [name, x] of Object.entries(e.jobs ?? {}))
    checkEntry(`job ${name}`, byJob.get(name) ?? [], x, name);
  for (const [name, x] of Object.entries(e.tasks ?? {})) {
    const t = o.tasks[name];
    if (t) checkEntry(`task ${name}`, [view(name)], x, t.job);
  }
  for (const [name, x] of Object.entries(e.nodes ?? {})) {
    const n = o.nodes[name]!;
    if (x.idleGpus !== undefined && !near(n.idleGpus, x.idleGpus))
      failures.push(`node ${name}: ${n.idleGpus} idle GPUs, expected ${x.idleGpus}`);
    if (x.releasingGpus !== undefined && !near(n.releasingGpus, x.releasingGpus))
      failures.push(`node ${name}: ${n.releasingGpus} releasing GPUs, expected ${x.releasingGpus}`);
  }
  return failures;
}

/** The per-session upper bounds on committed operations. */
export function checkBounds(
  s: Scenario,
  o: { binds: number; evictions: number; pipelines: number },
  label: string,
): string[] {
  const e = s.expect;
  if (!e) return [];
  const out: string[] = [];
  const bound = (what: string, got: number, max: number | null | undefined) => {
    if (max != null && got > max) out.push(`${label}: ${got} ${what}, at most ${max} allowed`);
  };
  bound("binds", o.binds, e.maxBinds);
  bound("evictions", o.evictions, e.maxEvictions);
  bound("pipelines", o.pipelines, e.maxPipelines);
  return out;
}
