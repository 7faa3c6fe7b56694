// Small hand-made snapshots for the core's unit tests, written in the scenario format
// (shared/scenario-format.md) so they read like the conformance cases.
import { type SchedulerConfig, type SessionResult, type Snapshot, runSession } from "../../src/core/index.js";
import { type Scenario, validateScenario } from "../../src/simulate/scenario.js";
import { scenarioConfig, scenarioSnapshot } from "../../src/simulate/to-snapshot.js";

export type ScenarioInput = Omit<Partial<Scenario>, "nodes" | "queues" | "jobs"> & {
  nodes: Scenario["nodes"];
  queues?: Scenario["queues"];
  jobs: Scenario["jobs"];
};

export function scenario(s: ScenarioInput): Scenario {
  return validateScenario(
    { name: "unit", actions: ["allocate"], queues: [{ name: "q", deserved: { gpu: -1 } }], ...s },
    "unit-test",
  );
}

export function build(s: ScenarioInput): { snapshot: Snapshot; config: SchedulerConfig } {
  const sc = scenario(s);
  return { snapshot: scenarioSnapshot(sc), config: scenarioConfig(sc) };
}

export function run(s: ScenarioInput): SessionResult {
  const { snapshot, config } = build(s);
  return runSession(snapshot, config);
}

/** pod name → node of every bind and pipeline. */
export function placements(r: SessionResult): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of [...r.binds, ...r.pipelines]) out[p.pod] = p.node;
  return out;
}

export function boundPods(r: SessionResult): string[] {
  return r.binds.map((b) => b.pod).sort();
}

export function fitErrors(r: SessionResult, job: string): string[] {
  return r.jobs.find((j) => j.uid === job)?.fitErrors ?? [];
}
