import { describe, expect, it } from "vitest";
import { ApiRejectedError, ApiUnavailableError } from "../../src/agent/graphql-client.js";
import { InventoryState } from "../../src/agent/inventory-state.js";
import { AgentStoppedError, ReportLane } from "../../src/agent/report-lane.js";
import type { NodeInventory } from "../../src/agent/backends/types.js";

describe("ReportLane", () => {
  it("sends in batches, keeps items while the API is away, and drops only an item the API refuses", async () => {
    const sent: string[][] = [];
    const dropped: string[] = [];
    let available = false;
    const lane = new ReportLane<string>(
      "test",
      async (items) => {
        if (!available) throw new ApiUnavailableError("down");
        if (items.includes("bad")) throw new ApiRejectedError("no such request", "BAD_USER_INPUT");
        sent.push(items);
      },
      2,
      (item) => dropped.push(item),
    );
    const acks = ["a", "b", "bad", "c", "d"].map((item) => lane.pushAndWait(item, item));
    expect(lane.pushAndWait("a", "a")).toBe(acks[0]); // queued twice = sent once

    await expect(lane.flush()).rejects.toThrow(ApiUnavailableError);
    expect(lane.size).toBe(5);

    available = true;
    await lane.flush();
    await Promise.all(acks);
    expect(sent).toEqual([["a", "b"], ["c"], ["d"]]);
    expect(dropped).toEqual(["bad"]);
    expect(lane.size).toBe(0);
  });

  it("fails the waiters of unsent items when the agent stops", async () => {
    const lane = new ReportLane<string>(
      "test",
      async () => {},
      10,
      () => {},
    );
    const waiting = lane.pushAndWait("x", "x");
    lane.abandon();
    await expect(waiting).rejects.toThrow(AgentStoppedError);
  });
});

describe("InventoryState", () => {
  const node = (name: string, cpuMillis = 1000): NodeInventory => ({
    name,
    capacity: { cpuMillis, memory: 0, gpus: 0, gpuMemory: 0 },
    labels: {},
    gpuModel: null,
    unschedulable: false,
    ready: true,
    maxPods: 110,
    taints: [],
  });

  it("sends the complete list first, then changes, and a complete list again after a deletion", () => {
    const state = new InventoryState();
    state.apply([node("a"), node("b")], true, []);
    state.apply([node("a", 2000)], false, []);
    expect(state.take()).toEqual({ nodes: [node("a", 2000), node("b")], complete: true });
    expect(state.take()).toBeNull();

    state.apply([node("c")], false, []);
    const partial = state.take()!;
    expect(partial).toEqual({ nodes: [node("c")], complete: false });
    state.failed(partial);
    expect(state.take()).toEqual({ nodes: [node("c")], complete: false });

    state.apply([], false, ["b"]);
    const complete = state.take()!;
    expect(complete.complete).toBe(true);
    expect(complete.nodes.map((n) => n.name)).toEqual(["a", "c"]);
    state.failed(complete);
    expect(state.take()?.complete).toBe(true);
  });
});
