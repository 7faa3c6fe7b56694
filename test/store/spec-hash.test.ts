// A job spec's fingerprint (a repeated idempotency key must carry the same spec) stays what it was
// for specs that set none of the fields added later (labels, run-time fields, restart policy,
// rendezvous port, simulated failing attempts, workload): jobs stored before
// keep answering their retries. The expected text is the fingerprint's earlier definition.
import { createHash } from "node:crypto";
import { expect, it } from "vitest";
import { parseSpec, specHash } from "../../src/store/operations/submit-job.js";

const earlier = (spec: ReturnType<typeof parseSpec>) => {
  const {
    idempotencyKey: _k,
    labels: _l,
    maxRuntimeSeconds: _m,
    expectedRuntimeSeconds: _e,
    restartPolicy: _r,
    rendezvousPort: _p,
    workload: _w,
    ...rest
  } = spec;
  const tasks = rest.tasks.map(({ exitFailureAttempts: _a, extendedResources: _e, ...t }) => t);
  const json = JSON.stringify({ ...rest, tasks }, (_key, v) => (typeof v === "bigint" ? v.toString() : v));
  return createHash("sha256").update(json).digest("hex");
};

const base = {
  name: "train",
  queue: "team-a",
  idempotencyKey: "k",
  tasks: [
    {
      name: "w",
      replicas: 2,
      resources: { cpu: 1000, memory: "4Gi", gpu: 1 },
      template: { spec: { containers: [{ name: "c", image: "x", env: [{ name: "A", value: "1" }] }] } },
    },
  ],
};

it("is unchanged for specs without the later fields, and counts them when set", () => {
  const plain = parseSpec(base);
  expect(specHash(plain)).toBe(earlier(plain));
  const labelled = parseSpec({ ...base, labels: [{ key: "pipeline", value: "1" }] });
  const limited = parseSpec({ ...base, maxRuntimeSeconds: 60 });
  const expected = parseSpec({ ...base, expectedRuntimeSeconds: 60 });
  const restarting = parseSpec({ ...base, restartPolicy: { maxRestarts: 2 } });
  const port = parseSpec({ ...base, rendezvousPort: 23456 });
  const failing = parseSpec({ ...base, tasks: [{ ...base.tasks[0]!, exitFailureAttempts: 1 }] });
  const hashes = new Set([plain, labelled, limited, expected, restarting, port, failing].map(specHash));
  expect(hashes.size).toBe(7);
  // label order does not matter
  const two = [
    { key: "a", value: "1" },
    { key: "b", value: "2" },
  ];
  expect(specHash(parseSpec({ ...base, labels: two }))).toBe(
    specHash(parseSpec({ ...base, labels: [...two].reverse() })),
  );
});
