// The CLI for CI pipelines against the real API server, workers and a simulated cluster: a file
// of several job specs submitted in one transaction (and refused as a whole, naming the document
// and field), `get jobs -l`, `get job` showing labels and run-time fields, and `wait -l` exiting
// 0 only when every labelled job succeeded.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type CliControlPlane, startCliControlPlane } from "./control-plane.js";
import { runCli } from "./run-cli.js";
import { tempDir } from "../helpers/temp-dir.js";
import { countRows } from "../helpers/db.js";

vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });

let cp: CliControlPlane;
const dir = tempDir("fleetq-cli-ci");
const file = (name: string, text: string) => {
  const f = path.join(dir, name);
  writeFileSync(f, text);
  return f;
};
const cli = (args: string[]) => runCli(args, { url: cp.baseUrl, token: cp.member });

const doc = (name: string, labels: Record<string, string>, task = "durationSeconds: 1") => `
name: ${name}
queue: team-a
labels:
${Object.entries(labels)
  .map(([k, v]) => `  - { key: ${k}, value: "${v}" }`)
  .join("\n")}
maxRuntimeSeconds: 3600
expectedRuntimeSeconds: 90
tasks:
  - name: worker
    replicas: 1
    resources: { cpu: "1", memory: 1Gi }
    ${task}
`;

beforeAll(async () => {
  cp = await startCliControlPlane();
});
afterAll(async () => cp?.close());

describe("a matrix: several documents, one transaction", () => {
  it("submits every document, prints the ids; get jobs -l and get job show the labels", async () => {
    const matrix = file(
      "matrix.yaml",
      [1, 2, 3].map((i) => doc(`m${i}`, { pipeline: "77", shard: String(i) })).join("---\n"),
    );
    const r = await cli(["submit", matrix, "--label", "run=r1"]);
    expect(r.stderr).toContain("3 jobs submitted");
    expect(r.code).toBe(0);
    const ids = r.stdout.trim().split("\n");
    expect(ids).toHaveLength(3);

    const listed = await cli(["get", "jobs", "-l", "pipeline=77,shard=2"]);
    expect(listed.code).toBe(0);
    const rows = listed.stdout.trim().split("\n");
    expect(rows[0]).toMatch(/^ID\s+NAME\s+QUEUE\s+CLUSTER\s+STATE\s+PODS\s+AGE\s+LABELS$/);
    expect(rows.slice(1).map((l) => l.split(/\s+/)[1])).toEqual(["m2"]);
    expect(rows[1]).toContain("pipeline=77,run=r1,shard=2");
    // a limit above one page: read in pages the API's cost limit allows
    const many = await cli(["-o", "json", "get", "jobs", "--limit", "150"]);
    expect(many.stderr).toBe("");
    expect((JSON.parse(many.stdout) as unknown[]).length).toBeGreaterThanOrEqual(3);
    const all = await cli(["-o", "json", "get", "jobs", "-l", "pipeline=77"]);
    expect((JSON.parse(all.stdout) as { name: string }[]).map((j) => j.name)).toEqual(["m3", "m2", "m1"]);

    const one = await cli(["get", "job", ids[0]!]);
    expect(one.stdout).toContain("Labels:     pipeline=77,run=r1,shard=1");
    expect(one.stdout).toContain("Run time:   limit 1h, expected 1m30s");

    // wait -l: every one of them succeeds
    const waited = await cli(["wait", "-l", "pipeline=77", "--timeout", "5m"]);
    expect(waited.stderr).toContain("3 jobs: 3 succeeded");
    expect(waited.code).toBe(0);
  });

  it("a bad document refuses the whole file, naming the document and field; exit 3", async () => {
    const before = await countRows(cp.db.url, "job");
    const bad = file(
      "bad.yaml",
      [doc("ok1", { pipeline: "78" }), doc("ok2", { pipeline: "78", "bad key": "x" })].join("---\n"),
    );
    const r = await cli(["submit", bad]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/bad\.yaml: document 2: field labels\[1\]\.key: label key "bad key" must be/);
    expect(await countRows(cp.db.url, "job")).toBe(before);
  });
});

describe("wait", () => {
  it("-l exits 1 when one of the labelled jobs failed, naming it", async () => {
    const matrix = file(
      "fails.yaml",
      [
        doc("good", { pipeline: "90" }),
        doc("broken", { pipeline: "90" }, "durationSeconds: 1\n    exitFailure: true"),
      ].join("---\n"),
    );
    expect((await cli(["submit", matrix])).code).toBe(0);
    const r = await cli(["wait", "-l", "pipeline=90", "--timeout", "5m"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("2 jobs: 1 succeeded, 1 failed");
    expect(r.stderr).toMatch(/job broken \([0-9a-f-]+\) FAILED/);
  });

  it("exits 2 when the time is up, 3 when no job has the labels or the selector is malformed", async () => {
    const slow = file("slow.yaml", doc("slow", { pipeline: "91" }, "durationSeconds: 600"));
    expect((await cli(["submit", slow])).code).toBe(0);
    const timedOut = await cli(["wait", "-l", "pipeline=91", "--timeout", "2s"]);
    expect(timedOut.code).toBe(2);
    expect((await cli(["wait", "-l", "pipeline=nothing"])).code).toBe(3);
    const malformed = await cli(["wait", "-l", "pipeline"]);
    expect(malformed.code).toBe(3);
    expect(malformed.stderr).toContain('"pipeline" is not key=value');
    const badKey = await cli(["get", "jobs", "-l", "-x=1"]);
    expect(badKey.code).toBe(3);
    expect(badKey.stderr).toContain("filter.labels[0].key");
  });
});
