// A cluster can still report pods on a node it no longer reports (a node removed before its pods
// are): the session keeps them in their jobs, on no node it holds, and any action may still evict
// them — naming the node they run on, so that the agent stops them there.
import { describe, expect, it } from "vitest";
import type { Snapshot } from "../../src/core/index.js";
import { gpuNode, job, pending, queue, run, running, snapshot } from "./actions/snapshots.js";

/** `make`'s snapshot without its node "gone" (its pods kept). */
function withoutGone(s: Snapshot): Snapshot {
  return { ...s, nodes: s.nodes.filter((n) => n.name !== "gone") };
}

describe("pods on a node the snapshot does not hold", () => {
  it("preempt evicts them where they run", () => {
    const s = snapshot(
      [gpuNode("n1", 2), gpuNode("gone", 2)],
      [queue("a", 0, { deserved: 4 })],
      [
        job("a0", "a", [running("n1"), running("gone"), running("n1"), running("gone")], {
          ageMinutes: 40,
          minMember: 1,
        }),
        job("a1", "a", [pending(2)], { ageMinutes: 5, priority: 100 }),
      ],
    );
    const r = run(withoutGone(s), ["preempt"]);
    expect(r.evictions).toContain("a0-1");
    expect(r.result.evictions.find((e) => e.pod === "a0-1")?.node).toBe("gone");
    expect(r.pipelines).toEqual(["a1-0@n1"]);
  });

  it("reclaim considers them without failing, and takes room only where it is", () => {
    const s = snapshot(
      [gpuNode("n1", 2), gpuNode("gone", 2)],
      [queue("a", 0, { deserved: 0 }), queue("b", 1, { deserved: 4 })],
      [
        job("a0", "a", [running("n1"), running("gone"), running("n1"), running("gone")], {
          ageMinutes: 40,
          minMember: 1,
        }),
        job("b0", "b", [pending(2)], { ageMinutes: 5 }),
      ],
    );
    for (const actions of [
      ["reclaim"],
      ["allocate", "consolidation", "reclaim", "preempt", "stalegangeviction"],
    ]) {
      const r = run(withoutGone(s), actions as never);
      for (const e of r.result.evictions)
        expect(e.node).toBe(e.pod === "a0-1" || e.pod === "a0-3" ? "gone" : "n1");
      for (const p of [...r.result.binds, ...r.result.pipelines]) expect(p.node).toBe("n1");
    }
  });

  it("a stale gang's pod there is evicted", () => {
    const s = snapshot(
      [gpuNode("n1", 2), gpuNode("gone", 2)],
      [queue("a", 0, { deserved: 4 })],
      [job("a0", "a", [running("gone"), pending()], { ageMinutes: 40, minMember: 2 })],
    );
    const r = run(withoutGone(s), ["stalegangeviction"]);
    expect(r.result.evictions.map((e) => [e.pod, e.node])).toEqual([["a0-0", "gone"]]);
  });
});
