// Admission's decisions without a database: `decide` against views of two identical 8-GPU
// clusters, for a job alone, a chunk decided in rounds, a re-admission candidate, a gang that can
// never fit, and the views carrying one chunk's decisions to the next.
import { describe, expect, it } from "vitest";
import { defaultSchedulerConfig, type PodGroupSpec, type Snapshot } from "../../src/core/index.js";
import { ClusterBase, ClusterView } from "../../workers/admission/cluster-view.js";
import { decide } from "../../workers/admission/decide.js";
import { job, NOW, node, pod, queue } from "../../bench/generate.js";
import { candidateOf, readyCluster } from "./admission-fixtures.js";

const GiB = 1024 ** 3;
const config = defaultSchedulerConfig();

const summary = readyCluster;
const clusters = [summary("alpha"), summary("beta")];

const snapshot = (name: string): Snapshot => ({
  now: NOW,
  nodes: [node(`${name}-n1`, 64_000, 512 * GiB, 8)],
  queues: [queue("team", null, 0, 16)],
  jobs: [],
  topologies: [],
});
const bases = clusters.map((s) => ClusterBase.of(s, snapshot(s.name), config));
const freshViews = () => new Map(bases.map((b) => [b.name, new ClusterView(b)]));

/** A gang of `pods` pods of `gpus` GPUs each. */
const gang = (name: string, pods: number, gpus: number, i = 0): PodGroupSpec =>
  job(
    name,
    "team",
    Array.from({ length: pods }, (_, k) => pod(`${name}-${k}`, { cpuMillis: 1000, memory: GiB, gpus })),
    NOW + i,
  );

const candidate = (spec: PodGroupSpec, cluster: string | null = null) => ({
  ...candidateOf(spec, cluster),
  assignedAt: cluster ? new Date(NOW) : null,
});

const sent = (d: ReturnType<typeof decide>) => d.assigned.map((x) => [x.job, x.cluster, x.tier]);

describe("decide", () => {
  it("sends a job alone to the best cluster where it fits, ties to the name that sorts first", () => {
    const d = decide([candidate(gang("one", 1, 8))], freshViews(), clusters);
    expect(sent(d)).toEqual([["one", "alpha", 2]]);
    expect(d.assigned[0]!.message).toMatch(/^the gang fits now \(score /);
    expect(d.reassigned).toEqual([]);
    expect(d.reasons).toEqual([]);
    expect(d.unplaced).toEqual([]);
  });

  it("decides a chunk in rounds: each job where it fits with those before it, then where reclaim makes room", () => {
    const chunk = ["j1", "j2", "j3"].map((n, i) => candidate(gang(n, 1, 8, i)));
    const d = decide(chunk, freshViews(), clusters);
    // The queue deserves 16 GPUs: on either cluster, a second job of 8 stays within its share.
    expect(sent(d)).toEqual([
      ["j1", "alpha", 2],
      ["j2", "beta", 2],
      ["j3", "alpha", 1],
    ]);
    expect(d.assigned[2]!.message).toMatch(/^busy \(.*\), but the queue is within its fair share/);
    expect(d.unplaced).toEqual([]);
    expect(d.reasons).toEqual([]);
  });

  it("decides the same again from views of the same bases", () => {
    const chunk = ["j1", "j2", "j3", "j4"].map((n, i) => candidate(gang(n, 2, 2, i)));
    expect(decide(chunk, freshViews(), clusters)).toEqual(decide(chunk, freshViews(), clusters));
  });

  it("carries a chunk's decisions in the views to the next chunk", () => {
    const views = freshViews();
    expect(sent(decide([candidate(gang("first", 1, 8))], views, clusters))).toEqual([["first", "alpha", 2]]);
    expect(views.get("alpha")!.unheld.gpu).toBe(0);
    expect(sent(decide([candidate(gang("second", 1, 8))], views, clusters))).toEqual([["second", "beta", 2]]);
    expect(sent(decide([candidate(gang("third", 1, 8))], views, clusters))).toEqual([["third", "alpha", 1]]);
    expect(views.get("alpha")!.backlog.gpu).toBe(8);
  });

  it("moves a re-admission candidate only to another cluster where it fits now", () => {
    const views = freshViews();
    const d = decide([candidate(gang("moved", 1, 8), "alpha")], views, clusters);
    expect(d.assigned).toEqual([]);
    expect(d.reassigned.map((x) => [x.job, x.from, x.cluster, x.tier])).toEqual([
      ["moved", "alpha", "beta", 2],
    ]);
    // Nowhere to go now: left where it waits, with no reason written.
    const stuck = decide([candidate(gang("stuck", 1, 8), "alpha")], views, clusters);
    expect(stuck.reassigned).toEqual([]);
    expect(stuck.unplaced).toEqual(["stuck"]);
    expect(stuck.reasons).toEqual([]);
  });

  it("gives a gang that can never fit a reason per cluster", () => {
    const d = decide(
      [candidate(gang("huge", 1, 16)), candidate(gang("small", 1, 1, 1))],
      freshViews(),
      clusters,
    );
    expect(sent(d)).toEqual([["small", "alpha", 2]]);
    expect(d.unplaced).toEqual(["huge"]);
    for (const c of d.reasons[0]!.reason.clusters)
      expect(c.message).toMatch(/^the gang can never fit here: /);
  });
});
