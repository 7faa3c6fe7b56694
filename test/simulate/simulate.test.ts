import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { simulate } from "../../src/simulate/command.js";
import { tempDir } from "../helpers/temp-dir.js";

function dir(files: Record<string, unknown>): string {
  const d = tempDir("fleetq-sim", "test");
  for (const [name, doc] of Object.entries(files)) {
    const p = join(d, name);
    mkdirSync(join(p, ".."), { recursive: true });
    writeFileSync(p, typeof doc === "string" ? doc : JSON.stringify(doc));
  }
  return d;
}

function exec(paths: string[], opts: { json?: boolean; summary?: boolean } = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = simulate(
    paths,
    opts,
    (l) => out.push(l),
    (l) => err.push(l),
  );
  return { code, out, err };
}

const base = {
  name: "two pods on one node",
  features: ["allocate"],
  actions: ["allocate"],
  nodes: { n1: { gpus: 2 } },
  queues: [{ name: "q", deserved: { gpu: -1 } }],
  jobs: [{ name: "j", queue: "q", perTask: { gpus: 1 }, tasks: [{}, {}] }],
};

describe("simulate", () => {
  it("passes a scenario whose expectations hold, exit 0", () => {
    const d = dir({
      "allocate/ok.json": {
        ...base,
        expect: { jobs: { j: { status: "Binding", node: "n1", gpus: 2 } }, maxBinds: 2 },
      },
    });
    const r = exec([d]);
    expect(r.code).toBe(0);
    expect(r.out[0]).toMatch(/^PASS two pods on one node/);
  });

  it("fails with the reasons, exit 1", () => {
    const d = dir({
      "bad.yaml": `${JSON.stringify({ ...base, expect: { jobs: { j: { status: "Pending" } }, maxBinds: 1 } })}`,
    });
    const r = exec([d]);
    expect(r.code).toBe(1);
    const text = r.out.join("\n");
    expect(text).toMatch(/^FAIL two pods on one node/);
    expect(text).toMatch(/task j-0 is Binding, expected Pending/);
    expect(text).toMatch(/2 binds, at most 1 allowed/);
  });

  it("refuses an invalid scenario naming the file and the field, exit 2", () => {
    const d = dir({
      "typo.json": { ...base, jobs: [{ ...base.jobs[0], queue: "nope" }] },
      "unknown-key.json": { ...base, nodez: {} },
      "wrong-type.json": { ...base, nodes: { n1: { gpus: "two" } } },
    });
    const r = exec([d]);
    expect(r.code).toBe(2);
    expect(r.out).toEqual([]);
    const e = r.err.join("\n");
    expect(e).toMatch(/typo\.json: jobs\[0\]\.queue: unknown queue nope/);
    expect(e).toMatch(/unknown-key\.json: \(root\): unknown field\(s\) nodez/);
    expect(e).toMatch(/wrong-type\.json: nodes\.n1\.gpus:/);
  });

  it("prints the same outcome with or without the expect block", () => {
    const d = dir({
      "a.json": { ...base, expect: { jobs: { j: { status: "Binding" } } } },
      "b.json": base,
    });
    const r = exec([d], { json: true });
    const [a, b] = r.out.map((l) => JSON.parse(l));
    expect(a.outcomes).toEqual(b.outcomes);
    expect(a.check).toEqual({ passed: true, failures: [] });
    expect(b.check).toBeNull();
    expect(a.outcomes[0].binds).toBe(2);
    expect(a.outcomes[0].tasks["j-0"]).toMatchObject({ job: "j", status: "Binding", node: "n1", gpus: 1 });
  });

  it("summarises per directory and feature, ending with the totals", () => {
    const d = dir({
      "allocate/ok.json": { ...base, expect: { jobs: { j: { status: "Binding" } } } },
      "allocate/bad.json": { ...base, name: "bad", expect: { jobs: { j: { status: "Pending" } } } },
    });
    const r = exec([d], { summary: true });
    expect(r.out.at(-1)).toBe("1 passed, 1 failed");
    expect(r.out).toContain("directory allocate: 1 passed, 1 failed");
    expect(r.out).toContain("feature allocate: 1 passed, 1 failed");
    expect(r.out.filter((l) => l.startsWith("PASS"))).toEqual([]);
  });

  it("runs a rounds scenario to its steady state", () => {
    const d = dir({
      "rounds.json": {
        ...base,
        rounds: { untilMatch: 2, afterMatch: 2 },
        expect: { jobs: { j: { status: "Running", node: "n1" } } },
      },
    });
    const r = exec([d], { json: true });
    const doc = JSON.parse(r.out[0]!);
    expect(doc.outcomes).toHaveLength(3);
    expect(doc.check.passed).toBe(true);
  });

  it("carries a victim search the budget stopped from one round to the next", () => {
    // Four 4-core nodes full of 1-core victims; a 4-core pod fits once the four victims of
    // one node are in the scenario, the thirteenth simulation. Five per round: the third round.
    const nodes = Object.fromEntries(
      ["n0", "n1", "n2", "n3"].map((n) => [n, { gpus: 0, cpuMillis: 4000, memory: 64e9 }]),
    );
    const victims = Array.from({ length: 16 }, (_, i) => ({
      name: `v${i + 1}`,
      queue: "q",
      priority: 10,
      ageMinutes: 10 + i,
      deleteOnEvict: true,
      perTask: { gpus: 0, cpuMillis: 1000 },
      tasks: [{ state: "Running", node: `n${i % 4}` }],
    }));
    const scenario = (untilMatch: number) => ({
      name: "a long victim search, five scenarios a round",
      features: ["preempt"],
      actions: ["preempt"],
      config: { session: { maxScenariosPerJob: 5 } },
      rounds: { untilMatch, afterMatch: 1 },
      nodes,
      queues: [{ name: "q", deserved: { gpu: -1 } }],
      jobs: [
        ...victims,
        { name: "big", queue: "q", priority: 50, perTask: { gpus: 0, cpuMillis: 4000 }, tasks: [{}] },
      ],
      expect: {
        jobs: Object.fromEntries(["v1", "v5", "v9", "v13"].map((v) => [v, { status: "Releasing" }])),
      },
    });
    const run = (untilMatch: number) =>
      JSON.parse(exec([dir({ "search.json": scenario(untilMatch) })], { json: true }).out[0]!);
    expect(run(2).check.passed).toBe(false);
    expect(run(3).check.passed).toBe(true);
  });

  it("takes a parent sub-group without minMember and refuses a leaf without one (exit 2)", () => {
    const grouped = (leafMin: number | undefined) => ({
      ...base,
      name: `sub-groups ${leafMin}`,
      jobs: [
        {
          name: "j",
          queue: "q",
          perTask: { gpus: 1 },
          subGroups: [
            { name: "all" },
            { name: "w", parent: "all", ...(leafMin ? { minMember: leafMin } : {}) },
          ],
          tasks: [{ subGroup: "w" }, { subGroup: "w" }],
        },
      ],
      expect: { jobs: { j: { status: "Binding" } } },
    });
    const ok = exec([dir({ "a.json": grouped(2) })]);
    expect(ok.err).toEqual([]);
    expect(ok.code).toBe(0);
    const bad = exec([dir({ "b.json": grouped(undefined) })]);
    expect(bad.code).toBe(2);
    expect(bad.err.join("\n")).toContain("jobs[0].subGroups[1].minMember: required on a leaf sub-group");
  });
});
