// The everyday commands against the real API server (real PostgreSQL and Redis, the workers and
// a simulated cluster): get, fairshare, why, cancel, queue, token — aligned tables, JSON output,
// and clear refusals.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { gql } from "../helpers/api.js";
import { type CliControlPlane, startCliControlPlane } from "./control-plane.js";
import { runCli, until } from "./run-cli.js";
import { tempDir } from "../helpers/temp-dir.js";

// Each test runs real processes against the real control plane: generous limits, no timing assertions.
vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });

let cp: CliControlPlane;
let admin: (args: string[]) => ReturnType<typeof runCli>;
let member: (args: string[]) => ReturnType<typeof runCli>;
const dir = tempDir("fleetq-cli-commands");

/** Columns line up: a left-aligned column ("NAME") starts at its header's offset in every row, after
 * a space; a right-aligned one ("NODES>") ends at its header's end. */
function expectAligned(table: string, headers: string[]): void {
  const lines = table.trimEnd().split("\n");
  const header = lines[0]!;
  for (const spec of headers) {
    const right = spec.endsWith(">");
    const name = right ? spec.slice(0, -1) : spec;
    const start = header.indexOf(name);
    expect(start, `header ${name}`).toBeGreaterThanOrEqual(0);
    for (const line of lines.slice(1)) {
      if (right) {
        const end = start + name.length - 1;
        expect(line[end], `${name} in "${line}"`).toMatch(/\S/);
        expect(line[end + 1] ?? " ", `${name} in "${line}"`).toBe(" ");
      } else if (start > 0 && line.length > start) {
        expect(line[start - 1], `${name} in "${line}"`).toBe(" ");
      }
    }
  }
}

beforeAll(async () => {
  cp = await startCliControlPlane();
  admin = (args) => runCli(args, { url: cp.baseUrl, token: cp.admin });
  member = (args) => runCli(args, { url: cp.baseUrl, token: cp.member });
});
afterAll(async () => cp?.close());

describe("queues", () => {
  it("queue create, set-quota (default row and a cluster's override), move", async () => {
    let r = await admin(["queue", "create", "team-c", "--parent", "org", "--priority", "150"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("queue team-c created under org");
    r = await admin([
      "queue",
      "set-quota",
      "team-c",
      "--resource",
      "gpu",
      "--deserved",
      "4",
      "--limit",
      "8",
      "--weight",
      "2",
    ]);
    expect(r.code).toBe(0);
    r = await admin(["queue", "set-quota", "team-c", "-r", "cpu", "--deserved", "16", "--cluster", "sim"]);
    expect(r.code).toBe(0);
    r = await admin([
      "queue",
      "set-quota",
      "team-c",
      "-r",
      "memory",
      "--deserved",
      "64Gi",
      "--limit",
      "unlimited",
    ]);
    expect(r.code).toBe(0);
    const { queue } = await cp.gql<{ queue: { quotas: Record<string, unknown>[] } }>(
      'query { queue(name: "team-c") { quotas { cluster resource deserved limit overQuotaWeight } } }',
    );
    expect(queue.quotas).toEqual(
      expect.arrayContaining([
        { cluster: null, resource: "GPU", deserved: 4, limit: 8, overQuotaWeight: 2 },
        expect.objectContaining({ cluster: "sim", resource: "CPU", deserved: 16_000 }),
        expect.objectContaining({ cluster: null, resource: "MEMORY", deserved: 64 * 2 ** 30, limit: -1 }),
      ]),
    );
    r = await admin(["queue", "move", "team-c", "--parent", "team-b"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("queue team-c now under team-b");

    const tree = await admin(["get", "queues"]);
    expect(tree.code).toBe(0);
    expectAligned(tree.stdout, ["QUEUE", "PRIORITY>", "QUOTA (DESERVED/LIMIT)"]);
    const lines = tree.stdout.split("\n");
    // the tree: team-c indented below team-b, its quotas in people's units
    const teamC = lines.find((l) => l.includes("team-c"))!;
    expect(teamC).toMatch(/^ {4}team-c\s+150\s+gpu 4\/8 w2, memory 64Gi\/∞\s+sim: cpu 16\/-/);
    expect(lines.findIndex((l) => l.includes("team-b"))).toBeLessThan(lines.indexOf(teamC));
  });

  it("refusals name what is wrong and exit 3", async () => {
    let r = await admin(["queue", "move", "org", "--parent", "team-a"]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/cycle|below/i);
    r = await admin(["queue", "set-quota", "team-a", "--resource", "gpus", "--deserved", "1"]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('--resource: "gpus" is not one of gpu, cpu, memory');
    r = await admin(["queue", "set-quota", "team-a", "--resource", "memory", "--deserved", "lots"]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('--deserved: "lots" is not an amount of memory');
    r = await member(["queue", "create", "mine"]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("[FORBIDDEN]");
  });
});

describe("jobs", () => {
  let running: string;
  let pending: string;

  beforeAll(async () => {
    const spec = (name: string, gpu: number, seconds: number) => {
      const file = path.join(dir, `${name}.yaml`);
      writeFileSync(
        file,
        `name: ${name}\nqueue: team-a\ntasks:\n  - name: w\n    replicas: 1\n    resources: { cpu: "1", memory: 1Gi, gpu: ${gpu} }\n    durationSeconds: ${seconds}\n`,
      );
      return file;
    };
    running = (await member(["submit", spec("long-train", 2, 600)])).stdout.trim();
    pending = (await member(["submit", spec("too-big", 64, 60), "--cluster", "sim"])).stdout.trim();
    await until(async () => {
      const { job } = await cp.gql<{ job: { state: string } }>("query($id: ID!) { job(id: $id) { state } }", {
        id: running,
      });
      return job.state === "RUNNING";
    }, "the job to run");
    await until(async () => {
      const { job } = await cp.gql<{ job: { pendingReason: { clusters: unknown[] } | null } }>(
        "query($id: ID!) { job(id: $id) { pendingReason { clusters { cluster } } } }",
        { id: pending },
      );
      return (job.pendingReason?.clusters.length ?? 0) > 0;
    }, "a pending reason from the scheduler");
  });

  it("get jobs: a table with filters, and JSON", async () => {
    const r = await member(["get", "jobs"]);
    expect(r.code).toBe(0);
    expectAligned(r.stdout, ["ID", "NAME", "QUEUE", "CLUSTER", "STATE", "PODS>", "AGE>"]);
    expect(r.stdout).toMatch(new RegExp(`${running}\\s+long-train\\s+team-a\\s+sim\\s+RUNNING\\s+1/1`));
    expect(r.stdout).toMatch(new RegExp(`${pending}\\s+too-big\\s+team-a\\s+\\S+\\s+PENDING\\s+0/1`));
    const onlyPending = await member(["get", "jobs", "--state", "pending", "-o", "json"]);
    expect(JSON.parse(onlyPending.stdout).map((j: { id: string }) => j.id)).toEqual([pending]);
    const bad = await member(["get", "jobs", "--state", "sleeping"]);
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain('--state: "sleeping" is not one of PENDING');
  });

  it("get job: pods, events and the pending reason", async () => {
    const r = await member(["get", "job", running]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Job:        long-train (${running})`);
    expect(r.stdout).toMatch(/w-0\s+w\s+RUNNING\s+gpu-\d/);
    expect(r.stdout).toContain("job.submitted");
    const missing = await member(["get", "job", "01a20000-0000-7000-8000-000000000000"]);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain("not found");
  });

  it("why: the pending reason per cluster and resource", async () => {
    const r = await member(["why", pending]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("is PENDING");
    expectAligned(r.stdout.slice(r.stdout.indexOf("CLUSTER")), ["CLUSTER", "SHORT OF", "REASON"]);
    expect(r.stdout).toMatch(/^sim\s+/m);
    const notPending = await member(["why", running]);
    expect(notPending.stdout).toContain("is RUNNING on cluster sim, not pending");
  });

  it("fairshare: per cluster and in total, aligned; one resource or all", async () => {
    const r = await member(["fairshare"]);
    expect(r.code).toBe(0);
    const table = r.stdout.slice(r.stdout.indexOf("CLUSTER"));
    expectAligned(table, [
      "CLUSTER",
      "QUEUE",
      "DESERVED>",
      "FAIR SHARE>",
      "ALLOCATED>",
      "REQUESTED>",
      "LIMIT>",
      "RECENT USAGE>",
    ]);
    expect(table).toMatch(/^sim\s+ {2}team-a\s+8\s+\S+\s+2\s+/m);
    expect(table).toMatch(/^\(total\)\s+ {2}team-a\s+8\s+/m);
    const one = await member(["fairshare", "--cluster", "sim", "--resource", "all", "-o", "json"]);
    const rows = JSON.parse(one.stdout) as {
      queue: string;
      cluster: string | null;
      allocated: { gpu: number };
    }[];
    expect(rows.every((x) => x.cluster === "sim")).toBe(true);
    expect(rows.find((x) => x.queue === "team-a")!.allocated.gpu).toBe(2);
    const all = await member(["fairshare", "--resource", "all"]);
    expect(all.stdout).toContain("GPU\n");
    expect(all.stdout).toContain("CPU (cores)\n");
    expect(all.stdout).toContain("MEMORY\n");
  });

  it("get clusters and get cluster NAME", async () => {
    const r = await member(["get", "clusters"]);
    expect(r.code).toBe(0);
    expectAligned(r.stdout, [
      "CLUSTER",
      "STATE",
      "NODES>",
      "GPU>",
      "CPU>",
      "MEMORY>",
      "HEARTBEAT",
      "OWNER",
      "LABELS",
    ]);
    expect(r.stdout).toMatch(/^sim\s+READY\s+2\s+2\/16\s+/m);
    // The workers of this control plane (one process) own the cluster: its id is host:pid.
    expect(r.stdout).toMatch(/^sim\s.*\s\S+:\d+\s/m);
    const one = await member(["get", "cluster", "sim"]);
    expect(one.stdout).toContain("State:      READY");
    expect(one.stdout).toMatch(/Owner:\s+\S+:\d+ \(since /);
    expect(one.stdout).toMatch(/gpu-0\s+yes\s+NVIDIA-A100-SXM4-80GB/);
    const unknown = await member(["get", "cluster", "nope"]);
    expect(unknown.code).toBe(3);
  });

  it("cancel", async () => {
    const r = await member(["cancel", running]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`job long-train (${running}) CANCELLED`);
    const again = await member(["cancel", "not-a-job-id"]);
    expect(again.code).toBe(3);
  });
});

describe("tokens", () => {
  it("token create prints the secret once; list; revoke", async () => {
    const created = await admin([
      "token",
      "create",
      "--name",
      "ci-team-b",
      "--role",
      "member",
      "--queues",
      "team-b",
    ]);
    expect(created.code).toBe(0);
    const secret = created.stdout.trim();
    expect(secret).toMatch(/^fq_/);
    const id = /id ([0-9a-f-]{36})/.exec(created.stderr)![1]!;
    expect((await gql(cp.url, secret, "{ me { name role queues } }")).data).toEqual({
      me: { name: "ci-team-b", role: "MEMBER", queues: ["team-b"] },
    });
    const list = await admin(["token", "list"]);
    expect(list.stdout).toMatch(new RegExp(`${id}\\s+ci-team-b\\s+MEMBER\\s+team-b`));
    const revoked = await admin(["token", "revoke", id]);
    expect(revoked.code).toBe(0);
    expect((await gql(cp.url, secret, "{ me { name } }")).errors?.[0]?.extensions?.code).toBe(
      "UNAUTHENTICATED",
    );
  });

  it("refusals: a member may not create tokens; a MEMBER token needs queues", async () => {
    const r = await member(["token", "create", "--name", "x", "--role", "viewer"]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("[FORBIDDEN]");
    const noQueues = await admin(["token", "create", "--name", "x", "--role", "member"]);
    expect(noQueues.code).toBe(3);
    expect(noQueues.stderr).toContain("queues");
    const badRole = await admin(["token", "create", "--name", "x", "--role", "owner"]);
    expect(badRole.stderr).toContain('--role: "owner" is not one of ADMIN, MEMBER, VIEWER, AGENT');
  });

  it("token create --admin works on the database directly (bootstrap, no API token)", async () => {
    const r = await runCli(["token", "create", "--admin", "--name", "first-admin"], {
      env: { DATABASE_URL: cp.db.url },
    });
    expect(r.code).toBe(0);
    const secret = r.stdout.trim();
    expect((await gql(cp.url, secret, "{ me { name role } }")).data).toEqual({
      me: { name: "first-admin", role: "ADMIN" },
    });
  });
});
