// `fleetq snapshot export` and `fleetq whatif` against the real API server on real PostgreSQL: a
// live cluster (nodes reported by its agent, one team's job placed by a real cycle, another team's
// job waiting on its quota) exported as a scenario that `fleetq simulate` runs with the same nodes
// and pods; a what-if cycle that changes nothing in the database, where a quota raise makes the
// waiting job start.
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { admin as pgAdmin } from "../helpers/db.js";
import { gql, gqlOk, reportNodes, startTestApi, type TestApi } from "../helpers/api.js";
import { runCycle } from "../helpers/cycle.js";
import { runCli } from "./run-cli.js";
import { tempDir } from "../helpers/temp-dir.js";

vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });

let t: TestApi;
let cli: (args: string[]) => ReturnType<typeof runCli>;
const dir = tempDir("fleetq-whatif");
const SUBMIT = "mutation($input: SubmitJobInput!) { submitJob(input: $input) { id state } }";
let waiting: string;

/** Every row of the tables a cycle or a decision would write, in a stable order. */
async function dump(): Promise<string> {
  return pgAdmin(async (c) => {
    const out: unknown[] = [];
    for (const table of ["cluster", "job", "pod", "queue", "queue_quota", "bind_request", "event"]) {
      const r = await c.query(`SELECT * FROM "${table}" ORDER BY 1`);
      out.push(table, r.rows);
    }
    return JSON.stringify(out);
  }, t.db.url);
}

beforeAll(async () => {
  t = await startTestApi();
  cli = (args) => runCli(args, { url: t.url.replace(/\/graphql$/, ""), token: t.adminToken });
  const ok = (q: string, v: Record<string, unknown> = {}) => gqlOk(t.url, t.adminToken, q, v);
  for (const q of [{ name: "org" }, { name: "team-a", parent: "org" }, { name: "team-b", parent: "org" }])
    await ok("mutation($input: CreateQueueInput!) { createQueue(input: $input) { name } }", { input: q });
  const quota = (queue: string, deserved: number, limit?: number) =>
    ok("mutation($input: SetQueueQuotaInput!) { setQueueQuota(input: $input) { name } }", {
      input: { queue, resource: "GPU", deserved, limit },
    });
  await quota("org", 16);
  await quota("team-a", 8);
  await quota("team-b", 0, 0);
  await ok('mutation { registerCluster(input: { name: "c1" }) { name } }');
  const agent = (
    await ok('mutation { createToken(input: { name: "agent-c1", role: AGENT, cluster: "c1" }) { secret } }')
  ).createToken as { secret: string };
  await reportNodes(
    t,
    agent.secret,
    "c1",
    [0, 1].map((i) => ({
      name: `gpu-${i}`,
      capacity: { cpu: 32000, memory: "256Gi", gpu: 8, gpuMemory: 8 * 81920 },
      labels: [{ key: "rack", value: `r${i}` }],
      gpuModel: "H100",
    })),
  );
  const submit = async (name: string, queue: string, gpu: number, replicas: number) =>
    (
      (
        await ok(SUBMIT, {
          input: {
            name,
            queue,
            cluster: "c1",
            tasks: [{ name: "w", replicas, resources: { cpu: 1000, memory: "1Gi", gpu } }],
          },
        })
      ).submitJob as { id: string }
    ).id;
  await submit("train", "team-a", 4, 2);
  await runCycle(t.server.store, "c1");
  waiting = await submit("eval", "team-b", 2, 1);
  await runCycle(t.server.store, "c1");
});
afterAll(async () => t?.close());

describe("snapshot export", () => {
  it("writes a scenario `fleetq simulate` runs with the cluster's nodes and pods", async () => {
    const file = path.join(dir, "c1.json");
    const r = await cli(["snapshot", "export", "--cluster", "c1", "-o", file]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const doc = JSON.parse(readFileSync(file, "utf8"));
    expect(Object.keys(doc.nodes)).toEqual(["gpu-0", "gpu-1"]);
    expect(doc.queues.map((q: { name: string }) => q.name)).toEqual(["org", "team-a", "team-b"]);
    expect(doc.queues[2]).toMatchObject({ deserved: { gpu: 0 }, limit: { gpu: 0 } });

    const sim = await cli(["simulate", file, "--json"]);
    expect(sim.stderr).toBe("");
    expect(sim.code).toBe(0);
    const outcome = JSON.parse(sim.stdout).outcomes[0];
    expect(Object.keys(outcome.nodes).sort()).toEqual(["gpu-0", "gpu-1"]);
    // The same pods: train's two on their nodes (still binding: no agent confirmed them), eval's pending.
    const { job } = await gqlOk<{ job: { pods: { name: string; node: string | null }[] } }>(
      t.url,
      t.adminToken,
      "query($id: ID!) { job(id: $id) { pods { name node } } }",
      {
        id: (
          await gqlOk<{ jobs: { edges: { node: { id: string; name: string } }[] } }>(
            t.url,
            t.adminToken,
            "{ jobs { edges { node { id name } } } }",
          )
        ).jobs.edges.find((e) => e.node.name === "train")!.node.id,
      },
    );
    const tasks = outcome.tasks as Record<string, { status: string; node: string | null; gpus: number }>;
    expect(Object.keys(tasks).sort()).toEqual(["eval/w-0", "train/w-0", "train/w-1"]);
    for (const p of job.pods) expect(tasks[`train/${p.name}`]).toMatchObject({ node: p.node, gpus: 4 });
    expect(tasks["eval/w-0"]).toMatchObject({ status: "Pending", gpus: 2 });
    expect(outcome.nodes["gpu-0"].idleGpus + outcome.nodes["gpu-1"].idleGpus).toBe(8);

    // YAML by the file's extension; stdout without a file.
    const yaml = path.join(dir, "c1.yaml");
    expect((await cli(["snapshot", "export", "-c", "c1", "--file", yaml])).code).toBe(0);
    expect((await cli(["simulate", yaml])).code).toBe(0);
    const out = await cli(["snapshot", "export", "-c", "c1"]);
    expect(JSON.parse(out.stdout).nodes["gpu-1"].gpus).toBe(8);
  });

  it("is ADMIN only; an unknown cluster is NOT_FOUND", async () => {
    const viewer = (
      await gqlOk<{ createToken: { secret: string } }>(
        t.url,
        t.adminToken,
        'mutation { createToken(input: { name: "viewer", role: VIEWER }) { secret } }',
      )
    ).createToken.secret;
    const r = await gql(t.url, viewer, '{ clusterScenario(cluster: "c1") }');
    expect(r.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    const w = await gql(t.url, viewer, '{ whatIf(cluster: "c1") { cluster } }');
    expect(w.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    const nf = await cli(["snapshot", "export", "-c", "nope"]);
    expect(nf.code).toBe(3);
    expect(nf.stderr).toContain("nope");
  });
});

describe("whatif", () => {
  it("a quota raise makes the waiting job start; the database is unchanged", async () => {
    const before = await dump();
    const same = await cli(["whatif", "--cluster", "c1"]);
    expect(same.stderr).toBe("");
    expect(same.code).toBe(0);
    expect(same.stdout).toContain("Would start (0)");
    const raised = await cli(["whatif", "--cluster", "c1", "--set-quota", "team-b:gpu=2:4", "-o", "table"]);
    expect(raised.code).toBe(0);
    expect(raised.stdout).toContain("Would start (1):");
    expect(raised.stdout).toMatch(new RegExp(`${waiting}\\s+eval\\s+team-b\\s+1\\s+gpu-`));
    expect(raised.stdout).toMatch(/team-b\s+0 -> 2\s+0 -> 2\s+0 -> 2/);
    const json = JSON.parse(
      (await cli(["-o", "json", "whatif", "-c", "c1", "--set-quota", "team-b:gpu=2:4"])).stdout,
    );
    expect(json.starts).toEqual([
      { job: waiting, name: "eval", queue: "team-b", pods: 1, nodes: [expect.stringMatching(/^gpu-/)] },
    ]);
    expect(json.evictions).toEqual([]);
    expect(await dump()).toBe(before);
    const { job } = await gqlOk<{ job: { state: string } }>(
      t.url,
      t.adminToken,
      "query($id: ID!) { job(id: $id) { state } }",
      {
        id: waiting,
      },
    );
    expect(job.state).toBe("PENDING");
  });

  it("--config runs another configuration; bad input names the field and exits 3", async () => {
    const cfg = path.join(dir, "no-actions.yaml");
    (await import("node:fs")).writeFileSync(cfg, "actions: [reclaim]\n");
    const r = await cli(["whatif", "-c", "c1", "--set-quota", "team-b:gpu=2:4", "--config", cfg]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Would start (0)");
    let bad = await cli(["whatif", "-c", "c1", "--set-quota", "nope:gpu=1"]);
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain("quotas[0].queue");
    bad = await cli(["whatif", "-c", "c1", "--set-quota", "team-b:gpus=1"]);
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain('--set-quota: "gpus" is not one of gpu, cpu, memory');
    (await import("node:fs")).writeFileSync(cfg, "actions: [allocate, dance]\n");
    bad = await cli(["whatif", "-c", "c1", "--config", cfg]);
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain("config.actions");
  });
});
