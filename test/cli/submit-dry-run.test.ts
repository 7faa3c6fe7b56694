// `fleetq submit FILE --dry-run [-o json]` against the real API server on real PostgreSQL: the
// short table and the JSON for pipelines, a manifest file, a file of several documents, the field
// of a bad spec and a VIEWER's refusal as exit code 3 — and no job stored by any of them.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { gqlOk, registerClusterWithAgent, reportNodes, startTestApi, type TestApi } from "../helpers/api.js";
import { admin as pgAdmin } from "../helpers/db.js";
import { tempDir } from "../helpers/temp-dir.js";
import { runCli } from "./run-cli.js";

vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });

let t: TestApi;
let viewer = "";
const dir = tempDir("fleetq-dry-run");
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};
const cli = (args: string[], token = t.adminToken) =>
  runCli(args, { url: t.url.replace(/\/graphql$/, ""), token });
const jobs = async () =>
  pgAdmin(async (c) => (await c.query("SELECT count(*)::int AS n FROM job")).rows[0].n as number, t.db.url);

const SPEC = `name: train
queue: team
tasks:
  - name: w
    replicas: 2
    resources: { cpu: 1000, memory: 1Gi, gpu: 1 }
`;

beforeAll(async () => {
  t = await startTestApi();
  const ok = (q: string) => gqlOk(t.url, t.adminToken, q);
  await ok('mutation { createQueue(input: { name: "team" }) { name } }');
  const agent = await registerClusterWithAgent(t, "c1");
  await reportNodes(t, agent, "c1", [{ name: "gpu-0", capacity: { cpu: 32000, memory: "256Gi", gpu: 8 } }]);
  viewer = (
    (await ok('mutation { createToken(input: { name: "v", role: VIEWER }) { secret } }')).createToken as {
      secret: string;
    }
  ).secret;
});
afterAll(async () => t?.close());

describe("fleetq submit --dry-run", () => {
  it("prints a short table, and JSON with -o json; submits nothing", async () => {
    const spec = file("job.yaml", SPEC);
    const table = await cli(["submit", spec, "--dry-run"]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(
      /Dry run of job train in queue team: would go to c1 \(tier 2\); estimated start now/,
    );
    expect(table.stdout).toMatch(/CLUSTER\s+START\s+WHY/);
    expect(table.stdout).toMatch(/c1 \*\s+now\s+the gang fits now/);
    expect(table.stdout).toMatch(/Would evict \(0 job\(s\)\)/);
    const json = await cli(["submit", spec, "--dry-run", "-o", "json"]);
    expect(json.code, json.stderr).toBe(0);
    const answer = JSON.parse(json.stdout);
    expect(answer).toMatchObject({ name: "train", queue: "team", cluster: "c1", tier: 2, evictions: [] });
    expect(Date.parse(answer.estimatedStart)).toBeGreaterThan(0);
    expect(await jobs()).toBe(0);
  });

  it("takes a manifest and a file of several documents", async () => {
    const manifest = file(
      "job-manifest.yaml",
      `apiVersion: batch/v1
kind: Job
metadata: { name: pi, labels: { fleetq.io/queue: team } }
spec:
  template:
    spec:
      containers: [{ name: pi, image: perl, resources: { limits: { nvidia.com/gpu: 1 } } }]
      restartPolicy: Never
`,
    );
    const one = await cli(["submit", manifest, "--dry-run", "-o", "json"]);
    expect(one.code, one.stderr).toBe(0);
    expect(JSON.parse(one.stdout)).toMatchObject({ name: "pi", queue: "team", cluster: "c1" });
    const many = await cli([
      "submit",
      file("two.yaml", `${SPEC}---\n${SPEC.replace("train", "eval")}`),
      "--dry-run",
      "-o",
      "json",
    ]);
    expect(many.code, many.stderr).toBe(0);
    expect(JSON.parse(many.stdout).map((a: { name: string }) => a.name)).toEqual(["train", "eval"]);
    expect(await jobs()).toBe(0);
  });

  it("names the bad field and refuses a VIEWER, exit code 3", async () => {
    const bad = await cli([
      "submit",
      file("bad.yaml", SPEC.replace("replicas: 2", "replicas: 0")),
      "--dry-run",
    ]);
    expect(bad.code).toBe(3);
    expect(bad.stderr).toMatch(/field tasks\[0\]\.replicas/);
    const refused = await cli(["submit", file("job2.yaml", SPEC), "--dry-run"], viewer);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/VIEWER/);
    expect((await cli(["submit", file("job3.yaml", SPEC), "--dry-run", "--wait"])).code).not.toBe(0);
    expect(await jobs()).toBe(0);
  });
});
