import { describe, expect, it } from "vitest";
import type { NodeInventory } from "../../src/agent/backends/types.js";
import { SimulatedCluster } from "../../src/agent/backends/simulated/simulated-cluster.js";
import { bindRequest } from "./bind-requests.js";

function gpuNode(name: string, gpus = 8): NodeInventory {
  return {
    name,
    capacity: { cpuMillis: 64_000, memory: 512 * 2 ** 30, gpus, gpuMemory: 81920 },
    labels: {},
    gpuModel: "A100",
    unschedulable: false,
    ready: true,
    maxPods: 110,
    taints: [],
  };
}

describe("SimulatedCluster", () => {
  it("runs a bound pod for its duration, then succeeds and releases its resources", () => {
    const cluster = new SimulatedCluster([gpuNode("n0")], 60);
    const effect = cluster.bind(
      bindRequest({ id: "r1", pod: "p0", node: "n0", gpus: 4, durationSeconds: 10 }),
      0,
    );
    expect(effect.outcome.ok).toBe(true);
    expect(effect.changes).toEqual([{ jobId: "job-1", pod: "p0", state: "RUNNING" }]);
    expect(cluster.nodeUsage("n0")).toMatchObject({ gpus: 4, pods: 1 });

    expect(cluster.advance(9_999)).toEqual([]);
    expect(cluster.advance(10_000)).toEqual([
      { jobId: "job-1", pod: "p0", state: "SUCCEEDED", exitCode: 0, bindRequest: "r1" },
    ]);
    expect(cluster.nodeUsage("n0")).toMatchObject({ gpus: 8, cpuMillis: 64_000, pods: 0 });
    expect(cluster.runningPodCount).toBe(0);
  });

  it("ends a pod Failed when its job asks for exitFailure, and uses the default duration", () => {
    const cluster = new SimulatedCluster([gpuNode("n0")], 60);
    cluster.bind(
      bindRequest({ id: "r1", pod: "p0", node: "n0", durationSeconds: null, exitFailure: true }),
      1_000,
    );
    expect(cluster.nextDeadline()).toBe(61_000);
    const [change] = cluster.advance(61_000);
    expect(change).toMatchObject({ pod: "p0", state: "FAILED", exitCode: 1 });
    expect(change?.message).toContain("failure");
  });

  it("answers a repeated bind truthfully and never runs the pod twice", () => {
    const cluster = new SimulatedCluster([gpuNode("n0"), gpuNode("n1")], 60);
    cluster.bind(bindRequest({ id: "r1", pod: "p0", node: "n0", gpus: 2 }), 0);
    const again = cluster.bind(bindRequest({ id: "r1", pod: "p0", node: "n0", gpus: 2 }), 5);
    expect(again.outcome).toEqual({ ok: true, message: "already running on n0" });
    expect(again.changes).toEqual([]);
    const elsewhere = cluster.bind(bindRequest({ id: "r2", pod: "p0", node: "n1", gpus: 2 }), 5);
    expect(elsewhere.outcome.ok).toBe(false);
    expect(elsewhere.outcome.message).toContain("already runs on n0");
    expect(cluster.nodeUsage("n0")?.gpus).toBe(6);
    expect(cluster.nodeUsage("n1")?.gpus).toBe(8);
  });

  it("refuses a bind that does not fit or names an unknown node", () => {
    const cluster = new SimulatedCluster([gpuNode("n0", 2)], 60);
    const tooBig = cluster.bind(bindRequest({ id: "r1", pod: "p0", node: "n0", gpus: 4 }), 0);
    expect(tooBig.outcome.ok).toBe(false);
    expect(tooBig.outcome.message).toContain("gpus 4 > free 2");
    const nowhere = cluster.bind(bindRequest({ id: "r2", pod: "p1", node: "n9" }), 0);
    expect(nowhere.outcome).toEqual({ ok: false, message: "node n9 does not exist" });
    expect(cluster.runningPodCount).toBe(0);

    const single = new SimulatedCluster([{ ...gpuNode("n1"), maxPods: 1 }], 60);
    expect(single.bind(bindRequest({ id: "a", pod: "pa", node: "n1" }), 0).outcome.ok).toBe(true);
    const full = single.bind(bindRequest({ id: "b", pod: "pb", node: "n1" }), 0);
    expect(full.outcome).toEqual({
      ok: false,
      message: "node n1 cannot fit the pod: already 1 pods (max 1)",
    });
  });

  it("evicts a running pod back to Pending, naming the bind whose run ends, and answers a late eviction ok", () => {
    const cluster = new SimulatedCluster([gpuNode("n0")], 60);
    cluster.bind(bindRequest({ id: "r1", pod: "p0", node: "n0", gpus: 8 }), 0);
    const evicted = cluster.evict(
      bindRequest({ id: "r2", kind: "evict", pod: "p0", node: "n0", reason: "reclaimed by queue ml" }),
    );
    expect(evicted.outcome.ok).toBe(true);
    expect(evicted.changes).toEqual([
      {
        jobId: "job-1",
        pod: "p0",
        state: "PENDING",
        message: "evicted from n0: reclaimed by queue ml",
        bindRequest: "r1",
      },
    ]);
    expect(cluster.nodeUsage("n0")?.gpus).toBe(8);
    // The pod's end timer was cancelled with it: nothing finishes later.
    expect(cluster.nextDeadline()).toBeNull();
    expect(cluster.advance(1e9)).toEqual([]);

    const late = cluster.evict(bindRequest({ id: "r2", kind: "evict", pod: "p0", node: "n0" }));
    expect(late.outcome).toEqual({ ok: true, message: "pod is not running on n0 (already gone)" });
    expect(late.changes).toEqual([]);

    // Bound anew: its next eviction names the new bind; a bind repeated on the node it runs on
    // makes the newer one the run's, a late repeat of an older one does not.
    cluster.bind(bindRequest({ id: "r3", pod: "p0", node: "n0", gpus: 8 }), 10);
    expect(cluster.bind(bindRequest({ id: "r5", pod: "p0", node: "n0", gpus: 8 }), 11).outcome.ok).toBe(true);
    cluster.bind(bindRequest({ id: "r3", pod: "p0", node: "n0", gpus: 8 }), 12);
    const again = cluster.evict(bindRequest({ id: "r6", kind: "evict", pod: "p0", node: "n0" }));
    expect(again.changes).toEqual([
      { jobId: "job-1", pod: "p0", state: "PENDING", message: "evicted from n0", bindRequest: "r5" },
    ]);
  });

  it("keeps a run whose bind was decided after the eviction that comes now (a restarted agent's late request)", () => {
    const cluster = new SimulatedCluster([gpuNode("n0")], 60);
    cluster.bind(bindRequest({ id: "r5", pod: "p0", node: "n0", gpus: 8, generation: 9 }), 0);
    const late = cluster.evict(
      bindRequest({ id: "r4", kind: "evict", pod: "p0", node: "n0", generation: 7 }),
    );
    expect(late.outcome).toEqual({
      ok: true,
      message:
        "superseded: pod p0 was bound again (generation 9) after this eviction was decided (generation 7)",
    });
    expect(late.changes).toEqual([]);
    expect(cluster.podNode("job-1", "p0")).toBe("n0");
    // A bind of the run repeated at a newer generation moves the run's generation with it.
    cluster.bind(bindRequest({ id: "r7", pod: "p0", node: "n0", gpus: 8, generation: 12 }), 1);
    expect(
      cluster.evict(bindRequest({ id: "r6", kind: "evict", pod: "p0", node: "n0", generation: 11 })).changes,
    ).toEqual([]);
    const current = cluster.evict(
      bindRequest({ id: "r8", kind: "evict", pod: "p0", node: "n0", generation: 12 }),
    );
    expect(current.changes).toMatchObject([{ pod: "p0", state: "PENDING", bindRequest: "r7" }]);
    expect(cluster.podNode("job-1", "p0")).toBeNull();
  });

  it("shares one device among the pods of a GPU group and frees it with the last one", () => {
    const cluster = new SimulatedCluster([gpuNode("n0", 1)], 60);
    const half = { gpuFraction: 0.5, gpuGroups: ["g1"], node: "n0" };
    expect(
      cluster.bind(bindRequest({ id: "a", pod: "pa", durationSeconds: 10, ...half }), 0).outcome.ok,
    ).toBe(true);
    expect(
      cluster.bind(bindRequest({ id: "b", pod: "pb", durationSeconds: 20, ...half }), 0).outcome.ok,
    ).toBe(true);
    expect(cluster.nodeUsage("n0")?.gpus).toBe(0);
    // Another group needs a device of its own: none is left.
    const other = cluster.bind(
      bindRequest({ id: "c", pod: "pc", gpuFraction: 0.5, gpuGroups: ["g2"], node: "n0" }),
      0,
    );
    expect(other.outcome.ok).toBe(false);
    cluster.advance(10_000);
    expect(cluster.nodeUsage("n0")?.gpus).toBe(0);
    cluster.advance(20_000);
    expect(cluster.nodeUsage("n0")?.gpus).toBe(1);
  });

  it("refuses a bind that would over-commit a shared GPU's memory, as a device plugin does", () => {
    const cluster = new SimulatedCluster([gpuNode("n0", 1)], 60);
    const on = (id: string, shape: { gpuFraction?: number; gpuMemory?: number }) =>
      cluster.bind(
        bindRequest({ id, pod: id, node: "n0", gpuGroups: ["g1"], durationSeconds: 10, ...shape }),
        0,
      );
    // 40,960 + 20,480 + 20,480 MiB of 81,920: the device is full.
    expect(on("a", { gpuFraction: 0.5 }).outcome.ok).toBe(true);
    expect(on("b", { gpuMemory: 20_480 }).outcome.ok).toBe(true);
    expect(on("c", { gpuFraction: 0.25 }).outcome.ok).toBe(true);
    const over = on("d", { gpuMemory: 10_240 });
    expect(over.outcome.ok).toBe(false);
    expect(over.outcome.message).toContain("GPU group g1");
    expect(over.changes).toEqual([]);
    expect(cluster.runningPodCount).toBe(3);
    // Once a pod of the group ends, its memory is free again.
    cluster.advance(10_000);
    expect(on("e", { gpuMemory: 40_960 }).outcome.ok).toBe(true);
  });
});

describe("SimulatedCluster: GPU devices", () => {
  const devices = Array.from({ length: 8 }, (_, index) => ({ index, nvlinkDomain: index < 4 ? "a" : "b" }));
  const topoNode = (name: string): NodeInventory => ({ ...gpuNode(name), gpuDevices: devices });
  const whole = (id: string, pod: string, gpuDevices: number[], durationSeconds = 10) =>
    bindRequest({ id, pod, node: "n0", gpus: gpuDevices.length, gpuDevices, durationSeconds });

  it("holds the devices a request names and refuses a request naming a held one", () => {
    const cluster = new SimulatedCluster([topoNode("n0")], 60);
    expect(cluster.bind(whole("a", "p0", [0, 1, 2, 3]), 0).outcome.ok).toBe(true);
    expect([...cluster.deviceHolders("n0")]).toEqual([0, 1, 2, 3].map((i) => [i, "job-1/p0"]));

    const clash = cluster.bind(whole("b", "p1", [3, 4], 20), 0);
    expect(clash).toEqual({
      outcome: { ok: false, message: "GPU device 3 of node n0 is already held by job-1/p0" },
      changes: [],
    });
    expect(cluster.nodeUsage("n0")).toMatchObject({ gpus: 4, pods: 1 }); // nothing taken
    expect(cluster.bind(whole("c", "p1", [4, 5], 20), 0).outcome.ok).toBe(true);

    // A finished pod gives its devices back.
    cluster.advance(10_000);
    expect([...cluster.deviceHolders("n0").keys()]).toEqual([4, 5]);
    expect(cluster.bind(whole("d", "p2", [2, 3]), 10_000).outcome.ok).toBe(true);
  });

  it("refuses devices the node does not have, a count that is not the pod's, a device named twice", () => {
    const cluster = new SimulatedCluster([topoNode("n0")], 60);
    expect(cluster.bind(whole("a", "p0", [9]), 0).outcome).toEqual({
      ok: false,
      message: "node n0 has no GPU device 9",
    });
    const miscounted = bindRequest({ id: "b", pod: "p1", node: "n0", gpus: 2, gpuDevices: [0] });
    expect(cluster.bind(miscounted, 0).outcome.message).toBe(
      "the request names 1 GPU device(s) for a pod of 2 GPU(s)",
    );
    const twice = bindRequest({ id: "c", pod: "p2", node: "n0", gpus: 2, gpuDevices: [1, 1] });
    expect(cluster.bind(twice, 0).outcome.message).toBe("the request names a GPU device twice: 1,1");
    expect(cluster.runningPodCount).toBe(0);
  });

  it("counts a shared group named by a device index as holding that device", () => {
    const cluster = new SimulatedCluster([topoNode("n0")], 60);
    const half = bindRequest({
      id: "a",
      pod: "f0",
      node: "n0",
      gpuFraction: 0.5,
      gpuGroups: ["6"],
      durationSeconds: 5,
    });
    expect(cluster.bind(half, 0).outcome.ok).toBe(true);
    expect(cluster.deviceHolders("n0").get(6)).toBe("group:6");
    expect(cluster.bind(whole("b", "p0", [6, 7]), 0).outcome.message).toBe(
      "GPU device 6 of node n0 is already held by group:6",
    );
    cluster.advance(5_000);
    expect(cluster.deviceHolders("n0").size).toBe(0);
    expect(cluster.bind(whole("c", "p0", [6, 7]), 5_000).outcome.ok).toBe(true);
  });

  it("leaves pods that name no devices to the GPU count (nodes without topology too)", () => {
    const cluster = new SimulatedCluster([topoNode("n0"), gpuNode("n1")], 60);
    expect(cluster.bind(bindRequest({ id: "a", pod: "p0", node: "n0", gpus: 8 }), 0).outcome.ok).toBe(true);
    expect(cluster.deviceHolders("n0").size).toBe(0);
    expect(cluster.bind(whole("b", "p1", [0]), 0).outcome.message).toContain("gpus 1 > free 0");
    const pinned = bindRequest({ id: "c", pod: "p2", node: "n1", gpus: 2, gpuDevices: [0, 1] });
    expect(cluster.bind(pinned, 0).outcome.ok).toBe(true);
    expect([...cluster.deviceHolders("n1").keys()]).toEqual([0, 1]);
  });
});
