// `fleetq submit` as CI pipelines use it, against the real API server, workers and a simulated
// cluster with its agent (real PostgreSQL and Redis): every exit code — 0 succeeded, 1 failed or
// cancelled, 2 timed out, 3 rejected, 4 unreachable — and the live progress line.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type CliControlPlane, startCliControlPlane } from "./control-plane.js";
import { runCli, until } from "./run-cli.js";
import { tempDir } from "../helpers/temp-dir.js";
import { countRows } from "../helpers/db.js";

// Each test runs real processes against the real control plane: generous limits, no timing assertions.
vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });

let cp: CliControlPlane;
const dir = tempDir("fleetq-cli-specs");

function spec(name: string, text: string): string {
  const file = path.join(dir, `${name}.yaml`);
  writeFileSync(file, text);
  return file;
}

const job = (name: string, extra = "", task = "") => `
name: ${name}
queue: team-a
${extra}
tasks:
  - name: worker
    replicas: 2
    resources: { cpu: "2", memory: 4Gi, gpu: 1 }
    durationSeconds: 2
${task}`;

interface JobRow {
  id: string;
  name: string;
  state: string;
}

async function jobNamed(name: string): Promise<JobRow | undefined> {
  const r = await cp.gql<{ jobs: { edges: { node: JobRow }[] } }>(
    "query { jobs(first: 100) { edges { node { id name state } } } }",
  );
  return r.jobs.edges.map((e) => e.node).find((j) => j.name === name);
}

const jobCount = () => countRows(cp.db.url, "job");

beforeAll(async () => {
  cp = await startCliControlPlane();
});
afterAll(async () => cp?.close());

describe("submit --wait", () => {
  it("exits 0 when the job succeeds, printing the job id and its progress", async () => {
    const r = await runCli(["submit", spec("ok", job("ok-job")), "--wait", "--timeout", "5m"], {
      url: cp.baseUrl,
      token: cp.member,
    });
    expect(r.stderr).toContain("SUCCEEDED");
    expect(r.code).toBe(0);
    const id = r.stdout.trim().split("\n")[0]!;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    // the progress line counted the pods through their states
    expect(r.stderr).toMatch(/pods: \d pending, \d running, \d succeeded/);
    expect(r.stderr).toContain("pods: 0 pending, 0 running, 2 succeeded");
    const { job: done } = await cp.gql<{ job: { state: string; pods: { state: string }[] } }>(
      "query($id: ID!) { job(id: $id) { state pods { state } } }",
      { id },
    );
    expect(done.state).toBe("SUCCEEDED");
    expect(done.pods.map((p) => p.state)).toEqual(["SUCCEEDED", "SUCCEEDED"]);
  });

  it("exits 1 when the job fails, naming the failed pods", async () => {
    const r = await runCli(
      ["submit", spec("fail", job("failing-job", "", "    exitFailure: true")), "--wait"],
      { url: cp.baseUrl, token: cp.member },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/failing-job \([0-9a-f-]+\) FAILED/);
    expect(r.stderr).toMatch(/pod worker-\d FAILED/);
  });

  it("exits 1 when the job is cancelled while it waits", async () => {
    // 64 GPUs per pod: never fits, so it stays pending until cancelled
    const file = spec("cancel", job("cancelled-job").replace("gpu: 1", "gpu: 64"));
    let cancelled = false;
    const r = await runCli(["submit", file, "--wait"], {
      url: cp.baseUrl,
      token: cp.member,
      onStderr: (all) => {
        if (cancelled || !all.includes("waiting")) return;
        cancelled = true;
        void jobNamed("cancelled-job").then((j) =>
          cp.gql("mutation($id: ID!) { cancelJob(id: $id) { state } }", { id: j!.id }),
        );
      },
    });
    expect(cancelled).toBe(true);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("CANCELLED");
  });

  it("exits 2 when the time is up, and --cancel-on-timeout cancels the job", async () => {
    const file = spec("timeout", job("slow-job").replace("gpu: 1", "gpu: 64"));
    const r = await runCli(["submit", file, "--wait", "--timeout", "3s", "--cancel-on-timeout"], {
      url: cp.baseUrl,
      token: cp.member,
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("did not finish within 3s");
    const j = await until(async () => {
      const found = await jobNamed("slow-job");
      return found?.state === "CANCELLED" ? found : undefined;
    }, "the timed-out job to be cancelled");
    expect(j.state).toBe("CANCELLED");
  });

  it("keeps following the job by polling when the subscription is unavailable", async () => {
    // A URL whose WebSocket upgrade fails: the CLI says so and polls to the end.
    const { startNoWebSocketProxy } = await import("./no-websocket-proxy.js");
    const proxy = await startNoWebSocketProxy(cp.baseUrl);
    try {
      const r = await runCli(["submit", spec("poll", job("polled-job")), "--wait"], {
        url: proxy.url,
        token: cp.member,
      });
      expect(r.stderr).toContain("live updates unavailable");
      expect(r.stderr).toContain("SUCCEEDED");
      expect(r.code).toBe(0);
    } finally {
      await proxy.close();
    }
  });
});

describe("submit is rejected with exit code 3, and nothing is created", () => {
  it("a spec the API refuses: the file and the field are named", async () => {
    const before = await jobCount();
    const r = await runCli(["submit", spec("bad", job("bad-job").replace("replicas: 2", "replicas: 0"))], {
      url: cp.baseUrl,
      token: cp.member,
    });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/bad\.yaml: field tasks\[0\]\.replicas: /);
    expect(await jobCount()).toBe(before);
  });

  it("a file that is not YAML, or misses required fields", async () => {
    const broken = await runCli(["submit", spec("broken", "name: [unclosed")], {
      url: cp.baseUrl,
      token: cp.member,
    });
    expect(broken.code).toBe(3);
    expect(broken.stderr).toMatch(/broken\.yaml: not valid YAML/);
    const noTasks = await runCli(["submit", spec("notasks", "name: x\nqueue: team-a\n")], {
      url: cp.baseUrl,
      token: cp.member,
    });
    expect(noTasks.code).toBe(3);
    expect(noTasks.stderr).toContain("notasks.yaml: field tasks is required");
    const missing = await runCli(["submit", path.join(dir, "does-not-exist.yaml")], {
      url: cp.baseUrl,
      token: cp.member,
    });
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain("does-not-exist.yaml: no such file");
  });

  it("an unknown queue", async () => {
    const r = await runCli(["submit", spec("q", job("q-job")), "--queue", "no-such-queue"], {
      url: cp.baseUrl,
      token: cp.member,
    });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("no-such-queue");
  });

  it("no permission: a member token outside its queues, no token, a revoked token", async () => {
    const before = await jobCount();
    const other = await runCli(["submit", spec("other", job("other-job")), "--queue", "team-b"], {
      url: cp.baseUrl,
      token: cp.member,
    });
    expect(other.code).toBe(3);
    expect(other.stderr).toContain("[FORBIDDEN]");
    const none = await runCli(["submit", spec("none", job("none-job"))], { url: cp.baseUrl, token: null });
    expect(none.code).toBe(3);
    expect(none.stderr).toContain("[UNAUTHENTICATED]");
    expect(none.stderr).toContain("FLEETQ_TOKEN");
    const { createToken } = await cp.gql<{ createToken: { id: string; secret: string } }>(
      'mutation { createToken(input: { name: "short-lived", role: MEMBER, queues: ["team-a"] }) { id secret } }',
    );
    await cp.gql("mutation($id: ID!) { revokeToken(id: $id) }", { id: createToken.id });
    const revoked = await runCli(["submit", spec("revoked", job("revoked-job"))], {
      url: cp.baseUrl,
      token: createToken.secret,
    });
    expect(revoked.code).toBe(3);
    expect(revoked.stderr).toContain("[UNAUTHENTICATED]");
    expect(await jobCount()).toBe(before);
  });

  it("bad command-line input", async () => {
    const r = await runCli(["submit", spec("t", job("t-job")), "--wait", "--timeout", "soon"], {
      url: cp.baseUrl,
      token: cp.member,
    });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('--timeout: "soon" is not a duration');
    const unknown = await runCli(["submit", "--frobnicate"], { url: cp.baseUrl, token: cp.member });
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toContain("unknown option '--frobnicate'");
  });
});

it("exits 4 when the API cannot be reached", async () => {
  const r = await runCli(["submit", spec("unreachable", job("u-job"))], {
    url: "http://127.0.0.1:9",
    token: cp.member,
  });
  expect(r.code).toBe(4);
  expect(r.stderr).toContain("cannot reach the fleetq API at http://127.0.0.1:9/graphql");
});
