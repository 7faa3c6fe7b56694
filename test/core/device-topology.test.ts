// Device choice on nodes that report their GPU topology (beyond KAI): one NVLink
// domain first, then one NUMA node, then as few domains as possible.
import { describe, expect, it } from "vitest";
import { run } from "./helpers.js";

/** 8 GPUs: two NVLink domains of 4 (a: 0-3, b: 4-7), NUMA 0 = 0-1 and 4-5, NUMA 1 = 2-3 and 6-7. */
const devices = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => ({
  nvlinkDomain: i < 4 ? "a" : "b",
  numaNode: i % 4 < 2 ? 0 : 1,
}));
const node = { gpus: 8, gpuMemory: 80_000, cpuMillis: 64_000, memory: 512e9, gpuDevices: devices };

function devicesOf(r: ReturnType<typeof run>, pod: string): number[] {
  return r.binds.find((b) => b.pod === pod)?.gpuDevices ?? [];
}

describe("device topology", () => {
  it("gives a multi-GPU pod devices of one NVLink domain", () => {
    const r = run({
      nodes: { n: node },
      jobs: [
        {
          name: "r",
          queue: "q",
          perTask: { gpus: 1 },
          tasks: [{ state: "Running", node: "n", gpuDevices: [0] }],
        },
        { name: "p", queue: "q", perTask: { gpus: 4 }, tasks: [{}] },
      ],
    });
    // Domain a has only 3 free devices: the 4-GPU pod goes to domain b whole.
    expect(devicesOf(r, "p-0")).toEqual([4, 5, 6, 7]);
  });

  it("packs into the fullest domain that still fits, keeping whole domains free", () => {
    const r = run({
      nodes: { n: node },
      jobs: [
        {
          name: "r",
          queue: "q",
          perTask: { gpus: 1 },
          tasks: [{ state: "Running", node: "n", gpuDevices: [4] }],
        },
        { name: "p", queue: "q", perTask: { gpus: 2 }, tasks: [{}] },
      ],
    });
    expect(devicesOf(r, "p-0")).toEqual([5, 6]);
  });

  it("falls back to one NUMA node when no NVLink domain has room", () => {
    const r = run({
      nodes: { n: node },
      jobs: [
        {
          name: "r",
          queue: "q",
          perTask: { gpus: 1 },
          tasks: [
            { state: "Running", node: "n", gpuDevices: [0] },
            { state: "Running", node: "n", gpuDevices: [2] },
            { state: "Running", node: "n", gpuDevices: [3] },
            { state: "Running", node: "n", gpuDevices: [6] },
            { state: "Running", node: "n", gpuDevices: [7] },
          ],
        },
        { name: "p", queue: "q", perTask: { gpus: 3 }, tasks: [{}] },
      ],
    });
    // Free: 1 (a, numa 0), 4 and 5 (b, numa 0): no domain has 3, NUMA node 0 does.
    expect(devicesOf(r, "p-0")).toEqual([1, 4, 5]);
  });

  it("never hands out a device twice, and shares a device by its index", () => {
    const r = run({
      nodes: { n: node },
      jobs: [
        { name: "big", queue: "q", ageMinutes: 3, perTask: { gpus: 4 }, tasks: [{}] },
        { name: "f1", queue: "q", ageMinutes: 2, perTask: { gpus: 0.5 }, tasks: [{}] },
        { name: "f2", queue: "q", ageMinutes: 1, perTask: { gpus: 0.5 }, tasks: [{}] },
        { name: "mid", queue: "q", perTask: { gpus: 3 }, tasks: [{}] },
      ],
    });
    const big = devicesOf(r, "big-0");
    const mid = devicesOf(r, "mid-0");
    const shared = r.binds.filter((b) => b.pod.startsWith("f")).map((b) => b.gpuGroups.join());
    expect(big).toHaveLength(4);
    expect(mid).toHaveLength(3);
    expect(new Set(shared).size).toBe(1);
    const all = [...big, ...mid, Number(shared[0])];
    expect(new Set(all).size).toBe(all.length);
  });
});
