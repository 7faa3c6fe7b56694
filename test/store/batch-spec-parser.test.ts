// A batch's repeated jobs (a CI matrix: the same job but for name, idempotency key and labels)
// are checked field by field only where they differ: every input gives exactly what checking it
// whole gives, the spec or the refusal.
import { describe, expect, it } from "vitest";
import { parseSpec } from "../../src/store/operations/submit-job.js";
import { batchSpecParser, type SubmitJobInput } from "../../src/store/validation/submit-job.js";

const base = (n: number, extra: Record<string, unknown> = {}) =>
  ({
    name: `shard-${n}`,
    queue: "ci",
    idempotencyKey: `run-7-${n}`,
    labels: [
      { key: "shard", value: String(n) },
      { key: "pipeline", value: "run-7" },
    ],
    maxRuntimeSeconds: 3600,
    tasks: [{ name: "worker", replicas: 4, resources: { cpu: 1000, memory: "4Gi", gpu: 1 } }],
    ...extra,
  }) as SubmitJobInput;

const whole = (input: SubmitJobInput) => {
  try {
    return { spec: parseSpec(input) };
  } catch (e) {
    return { error: `${(e as Error).constructor.name}: ${(e as Error).message}` };
  }
};

describe("batchSpecParser", () => {
  it("gives every input of a batch what checking it whole gives", () => {
    const inputs: unknown[] = [
      base(0),
      base(1),
      base(2, { name: "Bad_Name" }),
      base(3, { idempotencyKey: "" }),
      base(4, {
        labels: [
          { key: "shard", value: "1" },
          { key: "shard", value: "2" },
        ],
      }),
      base(5, { labels: null, idempotencyKey: null }),
      base(6, { labels: undefined }),
      base(7, { name: undefined }),
      base(8, { extra: undefined }), // an unknown field, even undefined, is refused
      base(9, { priority: Number.NaN }),
      base(10, { maxRuntimeSeconds: 10, expectedRuntimeSeconds: 20 }),
      base(11, { maxRuntimeSeconds: 10, expectedRuntimeSeconds: 20 }),
      base(12, { tasks: [{ name: "worker", replicas: 4, resources: { cpu: 1000, memory: "4Gi", gpu: 1 } }] }),
      base(13, {
        tasks: [{ name: "worker", replicas: 4, resources: { cpu: 1000, memory: "4Gi", gpu: 1.5 } }],
      }),
      base(14, { tasks: [{ resources: { memory: "4Gi", cpu: 1000, gpu: 1 }, name: "worker", replicas: 4 }] }),
      { ...base(15), name: 42 },
      base(16, {
        labels: [
          { key: "pipeline", value: "run-7" },
          { key: "a", value: "b" },
        ],
      }),
      Object.assign(Object.create({ inherited: 1 }), base(17)),
      null,
      "job",
      base(18),
    ];
    const parse = batchSpecParser(parseSpec);
    const errors = new Set<string>();
    for (const [i, input] of inputs.entries()) {
      const expected = whole(input as SubmitJobInput);
      let got: { spec?: unknown; error?: string };
      try {
        got = { spec: parse(input as SubmitJobInput) };
      } catch (e) {
        got = { error: `${(e as Error).constructor.name}: ${(e as Error).message}` };
      }
      expect(got, `input ${i}`).toEqual(expected);
      if (expected.error) errors.add(expected.error);
    }
    expect(errors.size).toBeGreaterThanOrEqual(8);
  });
});
