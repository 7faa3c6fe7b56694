// Running one scenario: one session, or for a `rounds` scenario N sessions with the
// snapshot advanced between them (and the victim searches a budget stopped going on), a
// check on the advanced snapshot, then M more sessions each of which must also meet the
// expectations.
import { type SearchCursor, type Session, createAction, isAllocated, openSession } from "../core/index.js";
import { checkBounds, checkOutcome } from "./check.js";
import { type Outcome, outcomeOf } from "./outcome.js";
import type { Scenario, ScenarioTask } from "./scenario.js";
import { scenarioConfig, scenarioSnapshot } from "./to-snapshot.js";

export interface ScenarioRun {
  outcomes: Outcome[];
  check: { passed: boolean; failures: string[] } | null;
}

/** `cursors`: the victim searches the previous round's budget stopped (they go on, as in a cycle). */
function runOnce(s: Scenario, withActions: boolean, cursors: SearchCursor[] = []): Session {
  const cfg = scenarioConfig(s);
  const ssn = openSession({ ...scenarioSnapshot(s), searchCursors: cursors }, cfg);
  if (withActions) for (const a of cfg.actions) createAction(a).execute(ssn);
  ssn.close();
  return ssn;
}

function taskInfo(ssn: Session) {
  const requests = new Map<string, { cpuMillis: number; memory: number }>();
  const accepted = new Map<string, number>();
  for (const j of ssn.jobs.values())
    for (const p of j.pods) {
      requests.set(p.name, { cpuMillis: p.req.cpu, memory: p.req.memory });
      accepted.set(p.name, p.acceptedGpus);
    }
  return { requests, accepted };
}

/** The scenario as the next round sees it (the integration harness's fixture update). */
function advance(s: Scenario, ssn: Session): Scenario {
  const byName = new Map<
    string,
    { status: string; node: string | null; groups: string[]; devices: number[] }
  >();
  const started = new Set<string>();
  for (const j of ssn.jobs.values())
    for (const p of j.pods) {
      byName.set(p.name, { status: p.status, node: p.nodeName, groups: p.gpuGroups, devices: p.gpuDevices });
      if (isAllocated(p.status)) started.add(j.name);
    }
  return {
    ...s,
    jobs: s.jobs.map((j) => {
      const tasks: ScenarioTask[] = j.tasks.map((t, k) => {
        const name = t.name ?? `${j.name}-${k}`;
        const now = byName.get(name)!;
        const next: ScenarioTask = { ...t, name };
        if (now.status === "Binding")
          Object.assign(next, { state: "Running", node: now.node, gpuGroups: now.groups });
        else if (now.status === "Pipelined")
          Object.assign(next, { state: "Pending", node: null, gpuGroups: [] });
        else if (now.status === "Releasing" && !j.deleteOnEvict)
          Object.assign(next, { state: "Pending", node: null, gpuGroups: [] });
        else Object.assign(next, { state: now.status, node: now.node, gpuGroups: now.groups });
        return next;
      });
      const anyPlaced = tasks.some((t) => isAllocated(t.state ?? "Pending"));
      return { ...j, tasks, lastStartMinutesAgo: anyPlaced ? 1 : null };
    }),
  };
}

/**
 * `outcomes: false`: the caller prints no outcome, so a plain scenario without expectations is
 * run without building one (on a large scenario that costs about as much as the session).
 */
export function runScenario(s: Scenario, opts: { outcomes?: boolean } = {}): ScenarioRun {
  const failures: string[] = [];
  if (!s.rounds) {
    const ssn = runOnce(s, true);
    if (opts.outcomes === false && !s.expect) return { outcomes: [], check: null };
    const o = outcomeOf(ssn);
    const { requests, accepted } = taskInfo(ssn);
    failures.push(...checkBounds(s, o, "session"), ...checkOutcome(s, o, requests, accepted));
    return { outcomes: [o], check: s.expect ? { passed: failures.length === 0, failures } : null };
  }
  const untilMatch = s.rounds.untilMatch || 2;
  const afterMatch = s.rounds.afterMatch || 5;
  let cur = s;
  let last: Session | null = null;
  for (let i = 0; i < untilMatch; i++) {
    last = runOnce(cur, true, last ? last.searchCursors.result(last) : []);
    failures.push(...checkBounds(s, outcomeOf(last), `round ${i + 1}`));
    cur = advance(cur, last);
  }
  const outcomes: Outcome[] = [];
  const fitErrors = new Map([...last!.jobs.values()].map((j) => [j.name, [...j.fitErrors]]));
  const settled = runOnce(cur, false);
  const settledOutcome = outcomeOf(settled, fitErrors);
  outcomes.push(settledOutcome);
  const info = taskInfo(settled);
  failures.push(
    ...checkOutcome(s, settledOutcome, info.requests, info.accepted).map(
      (f) => `after ${untilMatch} rounds: ${f}`,
    ),
  );
  let previous = last!;
  for (let i = 0; i < afterMatch; i++) {
    const ssn = runOnce(cur, true, previous.searchCursors.result(previous));
    previous = ssn;
    const o = outcomeOf(ssn);
    outcomes.push(o);
    const { requests, accepted } = taskInfo(ssn);
    const label = `round ${untilMatch + i + 1}`;
    failures.push(
      ...checkBounds(s, o, label),
      ...checkOutcome(s, o, requests, accepted).map((f) => `${label}: ${f}`),
    );
    cur = advance(cur, ssn);
  }
  return { outcomes, check: s.expect ? { passed: failures.length === 0, failures } : null };
}
