import { describe, expect, it } from "vitest";
import { computeFairShare } from "../../../src/core/index.js";
import { build } from "../helpers.js";

function shares(s: Parameters<typeof build>[0]) {
  const { snapshot, config } = build(s);
  return Object.fromEntries(computeFairShare(snapshot, config).map((q) => [q.queue, q]));
}

const nodes = { a: { gpus: 8 }, b: { gpus: 8 } };
const want = (name: string, queue: string, gpus: number) => ({
  name,
  queue,
  perTask: { gpus: 1 },
  tasks: Array.from({ length: gpus }, () => ({})),
});

describe("proportion fair share", () => {
  it("gives each queue its deserved quota, up to what it asks", () => {
    const s = shares({
      nodes,
      queues: [
        { name: "qa", deserved: { gpu: 4 }, overQuotaWeight: { gpu: 0 } },
        { name: "qb", deserved: { gpu: 4 }, overQuotaWeight: { gpu: 0 } },
      ],
      jobs: [want("a", "qa", 10), want("b", "qb", 2)],
    });
    expect(s.qa!.fairShare.gpu).toBe(4);
    expect(s.qb!.fairShare.gpu).toBe(2);
  });

  it("divides what is left over quota by weight, in whole GPUs", () => {
    const s = shares({
      nodes,
      queues: [
        { name: "qa", deserved: { gpu: 2 }, overQuotaWeight: { gpu: 3 } },
        { name: "qb", deserved: { gpu: 2 }, overQuotaWeight: { gpu: 1 } },
      ],
      jobs: [want("a", "qa", 16), want("b", "qb", 16)],
    });
    // 12 left over: 9 and 3.
    expect(s.qa!.fairShare.gpu).toBe(11);
    expect(s.qb!.fairShare.gpu).toBe(5);
  });

  it("serves higher-priority queues first over quota", () => {
    const s = shares({
      nodes,
      queues: [
        { name: "hi", priority: 200, deserved: { gpu: 0 }, overQuotaWeight: { gpu: 1 } },
        { name: "lo", priority: 100, deserved: { gpu: 0 }, overQuotaWeight: { gpu: 1 } },
      ],
      jobs: [want("a", "hi", 12), want("b", "lo", 12)],
    });
    expect(s.hi!.fairShare.gpu).toBe(12);
    expect(s.lo!.fairShare.gpu).toBe(4);
  });

  it("caps a queue at its limit", () => {
    const s = shares({
      nodes,
      queues: [
        { name: "qa", deserved: { gpu: 2 }, limit: { gpu: 3 }, overQuotaWeight: { gpu: 1 } },
        { name: "qb", deserved: { gpu: 2 }, overQuotaWeight: { gpu: 1 } },
      ],
      jobs: [want("a", "qa", 16), want("b", "qb", 16)],
    });
    expect(s.qa!.fairShare.gpu).toBe(3);
    expect(s.qb!.fairShare.gpu).toBe(13);
  });

  it("divides top-down through the tree", () => {
    const s = shares({
      nodes,
      queues: [
        { name: "d1", deserved: { gpu: 12 }, overQuotaWeight: { gpu: 0 } },
        { name: "d2", deserved: { gpu: 4 }, overQuotaWeight: { gpu: 0 } },
        { name: "t1", parent: "d1", deserved: { gpu: 6 }, overQuotaWeight: { gpu: 1 } },
        { name: "t2", parent: "d1", deserved: { gpu: 2 }, overQuotaWeight: { gpu: 1 } },
        { name: "t3", parent: "d2", deserved: { gpu: 4 }, overQuotaWeight: { gpu: 1 } },
      ],
      jobs: [want("a", "t1", 16), want("b", "t2", 16), want("c", "t3", 16)],
    });
    expect(s.d1!.fairShare.gpu).toBe(12);
    expect(s.t1!.fairShare.gpu + s.t2!.fairShare.gpu).toBe(12);
    expect(s.t1!.fairShare.gpu).toBe(8);
    expect(s.t3!.fairShare.gpu).toBe(4);
  });

  it("reports allocated and requested per queue, ancestors included", () => {
    const s = shares({
      nodes,
      queues: [
        { name: "d", deserved: { gpu: -1 } },
        { name: "t", parent: "d", deserved: { gpu: 4 } },
      ],
      jobs: [
        { name: "r", queue: "t", perTask: { gpus: 2 }, tasks: [{ state: "Running", node: "a" }] },
        want("p", "t", 3),
      ],
    });
    expect(s.t!.allocated.gpu).toBe(2);
    expect(s.t!.requested.gpu).toBe(5);
    expect(s.d!.allocated.gpu).toBe(2);
  });
});
