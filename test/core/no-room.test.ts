// The no-room memo: a node's answer for a request is kept until the node changes; a scan that
// found no room anywhere stands while every node changed since refuses with its recorded reasons.
import { describe, expect, it } from "vitest";
import { NodeInfo } from "../../src/core/api/node-info.js";
import { PodInfo } from "../../src/core/api/pod-info.js";
import { NoRoomMemo } from "../../src/core/framework/no-room.js";
import { runSession } from "../../src/core/index.js";
import { config, gpuNode, job, queue, running, snapshot } from "./actions/snapshots.js";

describe("NoRoomMemo", () => {
  it("answers from the memo while the node is unchanged, and asks again once it changes", () => {
    const node = new NodeInfo(gpuNode("n1", 2));
    node.index = 0;
    const holders = job("h", "q", [running("n1"), running("n1")]).pods.map((p) => new PodInfo(p, "h"));
    for (const p of holders) node.addTask(p);
    const wants = new PodInfo(job("w", "q", [{ gpus: 1 }]).pods[0]!, "w");
    const memo = new NoRoomMemo();

    expect(memo.hasRoom(wants, node)).toBe(false);
    expect(memo.reasons(wants, node)).toEqual(["node(s) didn't have enough resources: GPUs"]);
    // Asked again with the node as it was: the same answer (from the memo).
    expect(memo.hasRoom(wants, node)).toBe(false);

    // A holder leaves: the node changed, so the memo asks the node again.
    node.removeTask(holders[0]!);
    expect(memo.hasRoom(wants, node)).toBe(true);
    // Another request on the full node again is judged on its own.
    node.addTask(holders[0]!);
    const none = new PodInfo(job("c", "q", [{ gpus: 0 }]).pods[0]!, "c");
    expect(memo.hasRoom(wants, node)).toBe(false);
    expect(memo.hasRoom(none, node)).toBe(true);
  });
});

/**
 * n1 full; n2 with one free GPU. A and C/D ask two GPUs (no node has them); B, asking
 * `cpuMillis` and no GPU, is placed in between. The allocate session's binds and fit errors.
 */
function scans(cpuMillis: number) {
  const b = job("b", "q", [{ gpus: 0 }], { priority: 80 });
  b.pods[0]!.request.cpuMillis = cpuMillis;
  const s = snapshot(
    [gpuNode("n1", 2), gpuNode("n2", 1)],
    [queue("q", 0, { deserved: 4 })],
    [
      job("h", "q", [running("n1"), running("n1")], { priority: 10 }),
      job("a", "q", [{ gpus: 2 }], { priority: 90 }),
      b,
      job("c", "q", [{ gpus: 2 }], { priority: 70 }),
      job("d", "q", [{ gpus: 2 }], { priority: 60 }),
    ],
  );
  const r = runSession(s, config(["allocate"]));
  return {
    binds: r.binds.map((x) => `${x.pod}@${x.node}`),
    errors: (uid: string) => r.jobs.find((j) => j.uid === uid)!.fitErrors.join("\n"),
  };
}

describe("failed scans", () => {
  it("a pod with the request of one that found no room anywhere is refused the same way until a node changes", () => {
    // B takes all of n2's CPU, which changes why n2 refuses C and D.
    const { binds, errors } = scans(64_000);
    expect(binds).toEqual(["b-0@n2"]);
    expect(errors("a")).toMatch(/: 2 node\(s\) didn't have enough resources: GPUs\.$/);
    expect(errors("c")).toMatch(
      /: 1 node\(s\) didn't have enough resources: CPU cores\. \n2 node\(s\) didn't have enough resources: GPUs\.$/,
    );
    expect(errors("d")).toBe(errors("c").replace("ns/c-0", "ns/d-0"));
  });

  it("a node changed since that still refuses with the reasons recorded keeps the records of the scan", () => {
    // B takes some CPU of a node, not all: that node still refuses C and D for GPUs alone, as it did A.
    const { binds, errors } = scans(1_000);
    expect(binds).toHaveLength(1);
    expect(errors("a")).toMatch(/: 2 node\(s\) didn't have enough resources: GPUs\.$/);
    expect(errors("c")).toBe(errors("a").replace("ns/a-0", "ns/c-0"));
    expect(errors("d")).toBe(errors("a").replace("ns/a-0", "ns/d-0"));
  });
});
