// advanceSnapshot: the snapshot the next cycle sees when every decision took effect.
import { describe, expect, it } from "vitest";
import { createAction } from "../../src/core/actions/registry.js";
import { type Snapshot, advanceSnapshot, openSession, sessionResult } from "../../src/core/index.js";
import { NOW, config, contended } from "./actions/snapshots.js";

describe("advanceSnapshot", () => {
  it("evicted pods are pending again, pipelined ones nominated to their node and bound there next cycle", () => {
    const run = (s: Snapshot) => {
      const cfg = config(["allocate", "reclaim"]);
      const ssn = openSession(s, cfg);
      for (const a of cfg.actions) createAction(a).execute(ssn);
      return { ssn, result: sessionResult(ssn) };
    };
    const pod = (s: Snapshot, uid: string) => s.jobs.flatMap((j) => j.pods).find((p) => p.uid === uid)!;

    const first = run(contended());
    const evicted = first.result.evictions.map((e) => e.pod).sort();
    expect(evicted).toEqual(["a2-0", "a3-0"]);
    expect(first.result.pipelines.map((p) => `${p.pod}@${p.node}`).sort()).toEqual(["b0-0@n1", "b0-1@n1"]);

    const next = advanceSnapshot(contended(), first.ssn, first.result, 10_000);
    expect(next.now).toBe(NOW + 10_000);
    for (const uid of evicted) expect(pod(next, uid)).toMatchObject({ status: "Pending", node: null });
    expect(pod(next, "b0-0")).toMatchObject({ status: "Pending", node: null, nominatedNode: "n1" });
    expect(pod(next, "a0-0")).toMatchObject({ status: "Running", node: "n1" });

    // The freed room takes the pipelined pods: bound where they were nominated.
    const second = run(next);
    expect(second.result.binds.map((b) => `${b.pod}@${b.node}`).sort()).toEqual(["b0-0@n1", "b0-1@n1"]);
    const after = advanceSnapshot(next, second.ssn, second.result, 10_000);
    expect(pod(after, "b0-1")).toMatchObject({ status: "Running", node: "n1" });
    // The job's first bind started its clock at that session's time.
    expect(after.jobs.find((j) => j.uid === "b0")!.lastStartAt).toBe(NOW + 10_000);
  });
});
