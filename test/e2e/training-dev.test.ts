// Training jobs and Kubernetes manifests in `fleetq dev`, driven with the `fleetq` command as a
// user would: the restart example's first attempt fails and `submit --wait` shows the gang
// restart and exits 0 after the second; `fleetq logs -f` follows a gang across its restart;
// `fleetq logs --all -f` prints every pod's simulated lines as they come, to the end of their run;
// `fleetq render` prints the objects; a VIEWER is refused logs (exit code 3); every example
// manifest (examples/workloads) runs to success with `submit --wait`, shows in `get jobs` and
// `why`, and a manifest its queue's policy refuses exits 3 naming the field.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, it } from "vitest";
import { runCli, until } from "../cli/run-cli.js";
import { gqlOk } from "../helpers/api.js";
import { createTestDatabase, type TestDatabase } from "../helpers/db.js";
import { deleteTestKeys, testRedisPrefix } from "../helpers/redis.js";
import { tempDir } from "../helpers/temp-dir.js";
import { type DevProcess, startDevProcess } from "./dev-process.js";
import { ROOT } from "../cli/run-cli.js";

const state = tempDir("fleetq-training-dev");
let db: TestDatabase;
let dev: DevProcess;
let prefix = "";

beforeAll(async () => {
  db = await createTestDatabase();
  prefix = testRedisPrefix("fleetq-training-dev");
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    DATABASE_URL: db.url,
    FLEETQ_PORT: "0",
    FLEETQ_STATE_DIR: state,
    FLEETQ_REDIS_PREFIX: prefix,
    FLEETQ_BIND_QUEUE_PREFIX: `${prefix}bind`,
  };
  dev = await startDevProcess([process.execPath, path.join(ROOT, "bin/fleetq.mjs"), "dev"], {
    cwd: ROOT,
    env,
  });
}, 300_000);

afterAll(async () => {
  await dev?.stop();
  await deleteTestKeys(prefix);
  await db?.drop();
});

// The tests wait on simulated runs (a gang's two attempts, every example manifest): they run
// side by side on the one development server, each with its own jobs.
const cli = (args: string[], token = dev.memberToken) => runCli(args, { url: dev.baseUrl, token });

it.concurrent("submit --wait shows a gang restart and exits 0 once the second attempt succeeds", async ({
  expect,
}) => {
  const r = await cli(["submit", "examples/jobs/restart-on-failure.yaml", "--wait"]);
  expect(r.stderr).toContain("restarted: attempt 2");
  expect(r.stderr).toContain("failed with exit code 1");
  expect(r.stderr).toMatch(/SUCCEEDED after .* and 1 restart\(s\)/);
  expect(r.code).toBe(0);
  const id = r.stdout.trim();
  // The first attempt's runs, and how they ended.
  const previous = await cli(["logs", id, "--all", "--previous"]);
  expect(previous.code).toBe(0);
  expect(previous.stdout).toContain("[worker-0] exited with code 1");
  expect(previous.stdout).toContain("[worker-1] exited with code 1");
}, 180_000);

it.concurrent("logs -f waits for the gang to start and follows it across a restart to the end of its last attempt", async ({
  expect,
}) => {
  const submitted = await cli(["submit", "examples/jobs/restart-on-failure.yaml", "--name", "followed"]);
  expect(submitted.code).toBe(0);
  const followed = await cli(["logs", submitted.stdout.trim(), "-f"]);
  expect(followed.code).toBe(0);
  expect(followed.stderr).toContain("restarted its gang: following attempt 2");
  const lines = followed.stdout.trim().split("\n");
  expect(lines.filter((l) => l.startsWith("+ python"))).toHaveLength(2);
  expect(lines.filter((l) => l === "exited with code 1")).toHaveLength(1);
  expect(lines.at(-1)).toBe("exited with code 0");
}, 180_000);

it.concurrent("logs --all -f prints the simulated lines of every pod as they come, until their runs end", async ({
  expect,
}) => {
  const spec = path.join(state, "short.yaml");
  writeFileSync(
    spec,
    [
      "name: short",
      "queue: vision",
      "tasks:",
      "  - name: step",
      "    replicas: 2",
      '    resources: { cpu: "1", memory: 1Gi }',
      "    durationSeconds: 4",
      "    template:",
      "      spec:",
      "        containers: [{ name: main, image: busybox, command: [echo, hello] }]",
    ].join("\n"),
  );
  const submitted = await cli(["submit", spec]);
  expect(submitted.code).toBe(0);
  const id = submitted.stdout.trim();
  await until(async () => {
    const { job } = await gqlOk<{ job: { state: string } }>(
      `${dev.baseUrl}/graphql`,
      dev.memberToken,
      "query($id: ID!) { job(id: $id) { state } }",
      { id },
    );
    return job.state === "RUNNING";
  }, "the job to run");
  const followed = await cli(["logs", id, "--all", "-f"]);
  expect(followed.code).toBe(0);
  for (const pod of ["step-0", "step-1"]) {
    expect(followed.stdout).toContain(`[${pod}] + echo hello`);
    expect(followed.stdout).toContain(`[${pod}] exited with code 0`);
  }
  // Logs may hold secrets: not a VIEWER's.
  const refused = await cli(["logs", id], dev.viewerToken);
  expect(refused.code).toBe(3);
  expect(refused.stderr).toContain("may not read logs");
}, 180_000);

it.concurrent("render prints the Service and pods the agent would create, submitting nothing", async ({
  expect,
}) => {
  const r = await cli(["render", "examples/jobs/torchrun-ddp.yaml"]);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain("kind: Service");
  expect(r.stdout).toContain("hostname: worker-1");
  expect(r.stdout).toContain("name: MASTER_ADDR");
  const bad = await cli(["render", "examples/jobs/torchrun-ddp.yaml", "--queue", "nope"]);
  expect(bad.code).toBe(3);
  expect(bad.stderr).toContain('queue "nope" not found');
}, 60_000);

const WORKLOADS = ["job", "indexed-job", "jobset", "pytorchjob", "mpijob"];

it.concurrent("submit --wait runs every example manifest to success; get jobs and why show them like any job", async ({
  expect,
}) => {
  const runs = await Promise.all(
    WORKLOADS.map((w) => cli(["submit", `examples/workloads/${w}.yaml`, "--wait", "--timeout", "3m"])),
  );
  runs.forEach((r, i) => {
    expect(r.stderr, WORKLOADS[i]).toMatch(/SUCCEEDED after/);
    expect(r.code, WORKLOADS[i]).toBe(0);
  });
  const listed = await cli(["get", "jobs", "--state", "SUCCEEDED"]);
  expect(listed.code).toBe(0);
  for (const name of [
    "integration-tests",
    "eval-shards",
    "multislice-train",
    "resnet-ddp",
    "allreduce-bench",
  ])
    expect(listed.stdout).toContain(name);
  // A pending one: why names the reason; its queue came from the Kueue label.
  const pending = await cli(["submit", "examples/workloads/jobset.yaml", "--name", "second-jobset"]);
  expect(pending.code).toBe(0);
  const why = await cli(["why", pending.stdout.trim()]);
  expect(why.code).toBe(0);
  expect(why.stdout).toContain("second-jobset");
  const got = await cli(["get", "job", pending.stdout.trim()]);
  expect(got.stdout).toContain("llm");
  await cli(["cancel", pending.stdout.trim()]);
}, 300_000);

it.concurrent("a manifest its queue refuses exits 3 naming the field; nothing is submitted", async ({
  expect,
}) => {
  const manifest = path.join(state, "privileged.yaml");
  writeFileSync(
    manifest,
    [
      "apiVersion: kubeflow.org/v1",
      "kind: PyTorchJob",
      "metadata: { name: root-train, labels: { fleetq.io/queue: llm } }",
      "spec:",
      "  pytorchReplicaSpecs:",
      "    Worker:",
      "      replicas: 2",
      "      template:",
      "        spec:",
      "          containers:",
      "            - name: pytorch",
      "              image: pytorch/pytorch",
      "              securityContext: { privileged: true }",
    ].join("\n"),
  );
  const r = await cli(["submit", manifest]);
  expect(r.code).toBe(3);
  expect(r.stderr).toContain(
    "field spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].securityContext.privileged",
  );
  const unsupported = path.join(state, "deployment.yaml");
  writeFileSync(unsupported, "apiVersion: apps/v1\nkind: Deployment\nmetadata: { name: web }\n");
  const refused = await cli(["submit", unsupported, "--queue", "llm"]);
  expect(refused.code).toBe(3);
  expect(refused.stderr).toContain("field kind: apps/v1 Deployment is not a kind fleetq takes");
  const listed = await cli(["get", "jobs"]);
  expect(listed.stdout).not.toContain("root-train");
}, 60_000);
