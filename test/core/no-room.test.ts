// The no-room memo: a node's answer for a request is kept until the node changes.
import { describe, expect, it } from "vitest";
import { NodeInfo } from "../../src/core/api/node-info.js";
import { PodInfo } from "../../src/core/api/pod-info.js";
import { NoRoomMemo } from "../../src/core/framework/no-room.js";
import { gpuNode, job, running } from "./actions/snapshots.js";

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
