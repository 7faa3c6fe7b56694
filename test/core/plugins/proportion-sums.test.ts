// The proportion plugin adds a job's pods to its queues as one sum per amount when every amount
// is a whole number, and pod by pod otherwise (shared GPUs). Either way each queue holds what its
// pods add up to, and a parent what its children hold.
import { expect, it } from "vitest";
import type { Snapshot } from "../../../src/core/api/spec.js";
import { computeFairShare } from "../../../src/core/index.js";
import { build } from "../helpers.js";

const gpuNode = (gpus: number) => ({ gpus, cpuMillis: 64_000, memory: 512 * 2 ** 30, gpuMemory: 81_920 });

it("counts whole-number jobs in one sum per queue exactly as pod by pod", () => {
  const { snapshot, config } = build({
    nodes: { a: gpuNode(8), b: gpuNode(8), c: gpuNode(8) },
    queues: [
      { name: "dept", deserved: { gpu: 12 } },
      { name: "qa", parent: "dept", deserved: { gpu: 6 } },
      { name: "qb", parent: "dept", deserved: { gpu: 6 } },
      { name: "qc", deserved: { gpu: 4 } },
    ],
    jobs: [
      {
        name: "run-a",
        queue: "qa",
        perTask: { gpus: 1 },
        tasks: [{ state: "Running", node: "a" }, { state: "Running", node: "a" }, {}],
      },
      {
        name: "run-b",
        queue: "qb",
        perTask: { gpus: 2 },
        tasks: [
          { state: "Running", node: "b" },
          { state: "Running", node: "c" },
        ],
      },
      {
        name: "mem",
        queue: "qb",
        perTask: { gpuMemory: 20_000 },
        tasks: [{ state: "Running", node: "c" }, {}],
      },
      {
        name: "cpu",
        queue: "qc",
        perTask: { cpuMillis: 1500 },
        tasks: [{ state: "Running", node: "b" }, {}, {}],
      },
      { name: "wait", queue: "qc", perTask: { gpus: 1 }, tasks: [{}, {}, {}, {}] },
    ],
  });
  // Some jobs not preemptible: their sums count toward the non-preemptible totals as well.
  const snap: Snapshot = {
    ...snapshot,
    jobs: snapshot.jobs.map((j, i) => (i % 2 ? { ...j, preemptible: false } : j)),
  };
  const q = Object.fromEntries(computeFairShare(snap, config).map((x) => [x.queue, x]));
  // Whole numbers: 2 running one-GPU pods and a pending one; a running and 2 pending 1.5-CPU pods
  // beside 4 pending one-GPU pods.
  expect([q.qa!.allocated.gpu, q.qa!.requested.gpu]).toEqual([2, 3]);
  expect([q.qc!.allocated.cpuMillis, q.qc!.requested.cpuMillis, q.qc!.requested.gpu]).toEqual([
    1500, 4500, 4,
  ]);
  // qb: 2 running two-GPU pods (whole) and a GPU-memory job (a share of a device running).
  expect(q.qb!.allocated.gpu).toBeGreaterThan(4);
  expect(q.qb!.allocated.gpu).toBeLessThan(5);
  for (const k of ["gpu", "cpuMillis", "memory"] as const) {
    expect(q.dept!.allocated[k]).toBeCloseTo(q.qa!.allocated[k] + q.qb!.allocated[k], 9);
    expect(q.dept!.requested[k]).toBeCloseTo(q.qa!.requested[k] + q.qb!.requested[k], 9);
  }
});
