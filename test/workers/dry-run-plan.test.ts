// A dry run's plan without a database: admission's choice on views of two full clusters where
// team-b is within its fair share, the next cycle's reclaims by job, the estimated start after
// them, the jobs already waiting decided first, a named cluster, and the budget that stops the
// estimates but never the next cycle's evictions.
import { describe, expect, it } from "vitest";
import { defaultSchedulerConfig, type PodGroupSpec, type Snapshot } from "../../src/core/index.js";
import type { AdmissionCandidate } from "../../src/store/index.js";
import { ClusterBase } from "../../workers/admission/cluster-view.js";
import { type DryRunJob, planAdmission, planRunnersUp, planStarts } from "../../workers/admission/dry-run.js";
import { job, NOW, node, pod, queue } from "../../bench/generate.js";
import { candidateOf, readyCluster } from "./admission-fixtures.js";

const GiB = 1024 ** 3;
const config = defaultSchedulerConfig();
const ONE_GPU = { cpuMillis: 1000, memory: GiB, gpus: 1 };

const clusters = [readyCluster("alpha"), readyCluster("beta")];

/** One node of 8 GPUs that team-a fills with eight running one-GPU jobs. */
const snapshot = (name: string): Snapshot => ({
  now: NOW,
  nodes: [node(`${name}-n1`, 64_000, 512 * GiB, 8)],
  queues: [queue("team-a", null, 0, 4), queue("team-b", null, 1, 4)],
  jobs: Array.from({ length: 8 }, (_, i) => ({
    ...job(
      `${name}-a${i}`,
      "team-a",
      [pod(`${name}-a${i}-0`, ONE_GPU, "Running", `${name}-n1`)],
      NOW - 60_000 + i,
    ),
    lastStartAt: NOW - 60_000,
  })),
  topologies: [],
});
const snapshots = new Map(clusters.map((s) => [s.name, snapshot(s.name)]));
const bases = () => new Map(clusters.map((s) => [s.name, ClusterBase.of(s, snapshots.get(s.name)!, config)]));

const gang = (name: string, pods: number, i = 0): PodGroupSpec =>
  job(
    name,
    "team-b",
    Array.from({ length: pods }, (_, k) => pod(`${name}-${k}`, ONE_GPU)),
    NOW + i,
  );
const candidate = (spec: PodGroupSpec) => candidateOf(spec);
const fleet = (waiting: AdmissionCandidate[] = []) => ({
  clusters,
  bases: bases(),
  waiting,
  config,
  batch: 1000,
  batchPods: 2000,
});
const starts = (stop?: () => boolean) => ({
  config,
  snapshots,
  topologies: new Map(),
  estimate: { maxSessions: 20 },
  stop,
});

describe("a dry run's plan", () => {
  it("chooses where reclaim makes room, and answers the next cycle's reclaims and the start after them", () => {
    const jobs: DryRunJob[] = [{ candidate: candidate(gang("b", 4)), named: null }];
    const plan = planAdmission(fleet(), jobs);
    expect(plan.answers[0]).toMatchObject({ cluster: "alpha", tier: 1, named: false });
    expect(plan.runnersUp.get("b")).toEqual(["beta"]);
    const [chosen] = planStarts(plan, starts());
    expect(chosen!.clusters.map((c) => c.estimated)).toEqual([true, false]);
    const [a] = planRunnersUp(plan, [chosen!], starts());
    const now = a!.evictions.filter((e) => e.now);
    expect(now.map((e) => [e.queue, e.cluster, e.pods, e.action])).toEqual(
      Array.from({ length: 4 }, () => ["team-a", "alpha", 1, "reclaim"]),
    );
    expect(new Set(now.map((e) => e.job)).size).toBe(4);
    expect(a!.estimatedStart).toBeGreaterThan(NOW);
    expect(a!.clusters.map((c) => [c.cluster, c.chosen, c.estimated])).toEqual([
      ["alpha", true, true],
      ["beta", false, true],
    ]);
    expect(a!.clusters[1]!.estimatedStart).toBe(a!.estimatedStart);
  });

  it("decides the jobs already waiting first, as the next pass would", () => {
    const waiting = [candidate(gang("w", 4, -1000))];
    const plan = planAdmission(fleet(waiting), [{ candidate: candidate(gang("b", 4)), named: null }]);
    expect(plan.answers[0]).toMatchObject({ cluster: "beta", tier: 1 });
    expect(plan.sent.get("alpha")!.map((s) => s.uid)).toEqual(["w"]);
    const alpha = plan.answers[0]!.clusters.find((c) => c.cluster === "alpha")!;
    expect(alpha).toMatchObject({ chosen: false, candidate: true });
  });

  it("skips admission for a job naming its cluster", () => {
    const plan = planAdmission(fleet(), [{ candidate: candidate(gang("n", 1)), named: "beta" }]);
    expect(plan.answers[0]).toMatchObject({ cluster: "beta", named: true, tier: null });
    expect(plan.runnersUp.get("n")).toEqual([]);
    const [a] = planStarts(plan, starts());
    expect(a!.evictions.filter((e) => e.now).length).toBeGreaterThan(0);
  });

  it("answers the next cycle's evictions whatever the budget, and estimates nothing past it", () => {
    const plan = planAdmission(fleet(), [{ candidate: candidate(gang("b", 4)), named: null }]);
    const [a] = planStarts(
      plan,
      starts(() => true),
    );
    expect(a!.evictions.filter((e) => e.now)).toHaveLength(4);
    expect(a!.estimatedStart).toBeNull();
    expect(a!.clusters.map((c) => c.estimated)).toEqual([false, false]);
  });
});

describe("a job no cluster takes now", () => {
  it("says why per cluster, and estimates its earliest start from the run times the jobs declare", () => {
    const full: Snapshot = {
      now: NOW,
      nodes: [node("solo-n1", 64_000, 512 * GiB, 8)],
      queues: [queue("team-b", null, 0, 8)],
      jobs: Array.from({ length: 8 }, (_, i) => ({
        ...job(`r${i}`, "team-b", [pod(`r${i}-0`, ONE_GPU, "Running", "solo-n1")], NOW - 60_000 + i),
        lastStartAt: NOW - 60_000,
      })),
      topologies: [],
    };
    const solo = readyCluster("solo");
    const plan = planAdmission(
      { ...fleet(), clusters: [solo], bases: new Map([["solo", ClusterBase.of(solo, full, config)]]) },
      [{ candidate: candidate(gang("late", 4)), named: null }],
    );
    expect(plan.answers[0]).toMatchObject({ cluster: null, tier: null });
    expect(plan.answers[0]!.clusters[0]!.message).toMatch(
      /^busy: .*queue team-b would exceed its fair share/,
    );
    // The running jobs end 10 minutes from now (one minute run, 11 declared).
    const runtimes = new Map(full.jobs.map((j) => [j.uid, { expectedMs: 660_000 }]));
    const inputs = {
      ...starts(),
      snapshots: new Map([["solo", full]]),
      estimate: { runtimes, maxSessions: 20 },
    };
    const [a] = planRunnersUp(plan, planStarts(plan, inputs), inputs);
    expect(a!.estimatedCluster).toBe("solo");
    expect(a!.estimatedStart).toBe(NOW + 600_000);
    expect(a!.evictions).toEqual([]);
  });
});
