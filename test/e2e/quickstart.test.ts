// The README's quick start on a fresh clone of the repository: `npm install && npm start`, then the
// CLI commands it lists, until jobs run in all three simulated clusters; Ctrl-C stops everything;
// a second `npm start` finds the same demo and tokens.
//
// `npm install` is the one step not run literally: a full install takes minutes, so the clone gets a
// symlink to this checkout's node_modules and runs what the install's scripts run
// (`npm run db:generate`: the Prisma client, which is gitignored; `npm run build`: the compiled code).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { gqlOk } from "../helpers/api.js";
import { testRedisPrefix } from "../helpers/redis.js";
import { deleteTestKeys } from "../helpers/redis.js";
import { ROOT, runCli, until } from "../cli/run-cli.js";
import { type DevProcess, startDevProcess } from "./dev-process.js";
import { tempDir } from "../helpers/temp-dir.js";

const configHome = tempDir("fleetq-qs-config");
let clone: string;
let dev: DevProcess | null = null;
let env: Record<string, string>;

const cleanExit = (e: { code: number | null; signal: string | null }) =>
  e.code === 0 || e.signal === "SIGINT";

/** The commands between the README's quick-start markers. */
function quickStartCommands(): string[] {
  const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
  const block = /<!-- quickstart[^>]*-->\s*```sh\n([\s\S]*?)```/.exec(readme);
  if (!block) throw new Error("README.md has no quick-start block");
  return block[1]!
    .split("\n")
    .map((l) => l.replace(/\s+#.*$/, "").trim())
    .filter((l) => l && !l.startsWith("#"));
}

beforeAll(() => {
  clone = mkdtempSync(path.join(tmpdir(), "fleetq-quickstart-"));
  execFileSync("git", ["clone", "--quiet", "--no-hardlinks", ROOT, clone]);
  symlinkSync(path.join(ROOT, "node_modules"), path.join(clone, "node_modules"), "dir");
  execFileSync("npm", ["run", "-s", "db:generate"], { cwd: clone, stdio: "ignore" });
  execFileSync("npm", ["run", "-s", "build"], { cwd: clone, stdio: "ignore" });
  const prefix = testRedisPrefix("fleetq-quickstart");
  env = {
    ...(process.env as Record<string, string>),
    // What differs from a user's machine: no port 4000 (other tests run), a Redis namespace of its
    // own on the shared test Redis, and no DATABASE_URL (the embedded default, as on a fresh machine).
    FLEETQ_PORT: "0",
    FLEETQ_REDIS_PREFIX: prefix,
    FLEETQ_BIND_QUEUE_PREFIX: `${prefix}bind`,
    XDG_CONFIG_HOME: configHome,
  };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  delete env.FLEETQ_STATE_DIR;
}, 300_000); // a clone, the Prisma client and a build

afterAll(async () => {
  await dev?.stop();
  rmSync(clone, { recursive: true, force: true });
  await deleteTestKeys(env.FLEETQ_REDIS_PREFIX!);
});

it("the README's quick start runs jobs in all three clusters", async () => {
  const commands = quickStartCommands();
  expect(commands.slice(0, 2)).toEqual(["npm install", "npm start"]);
  // `npm start` runs the compiled fleetq in npm's own child process (no wrapper that would kill it
  // when it does not acknowledge a Ctrl-C at once: a busy embedded database).
  const scripts = JSON.parse(readFileSync(path.join(clone, "package.json"), "utf8")).scripts;
  expect(scripts.start, "package.json scripts.start").toBe("node bin/fleetq.mjs dev");

  dev = await startDevProcess(["npm", "start"], { cwd: clone, env });
  expect(dev.banner).toContain("a100-small (4 nodes, 32 GPUs)");
  expect(dev.banner).toContain("h100-l4-mixed");
  expect(dev.banner).toContain("cpu-heavy");
  expect(dev.banner).toContain(`embedded PGlite in .data/pglite`);

  const cliEnv: Record<string, string> = {};
  const submitted: string[] = [];
  for (const command of commands.slice(2)) {
    if (command.startsWith("export ")) {
      // export FLEETQ_URL=… FLEETQ_TOKEN=<member token>: the values npm start printed
      for (const [, name] of command.matchAll(/(\w+)=\S+/g)) {
        cliEnv[name!] = name === "FLEETQ_URL" ? dev.baseUrl : dev.memberToken;
      }
      continue;
    }
    const [tool, bin, ...args] = command.split(/\s+/);
    expect([tool, bin]).toEqual(["npx", "fleetq"]);
    const r = await runCli(args, { cwd: clone, url: cliEnv.FLEETQ_URL, token: cliEnv.FLEETQ_TOKEN });
    expect(r.code, `${command}\n${r.stderr}`).toBe(0);
    if (args[0] === "submit") submitted.push(r.stdout.trim());
  }
  expect(submitted).toHaveLength(3);

  // Running jobs in all three clusters (the CLI's own view of them)
  const seen = new Map<string, string>();
  await until(async () => {
    const r = await runCli(["get", "jobs", "-o", "json"], {
      cwd: clone,
      url: dev!.baseUrl,
      token: dev!.memberToken,
    });
    for (const j of JSON.parse(r.stdout) as {
      id: string;
      state: string;
      cluster: { name: string } | null;
    }[]) {
      if (submitted.includes(j.id) && j.state === "RUNNING" && j.cluster) seen.set(j.id, j.cluster.name);
    }
    return seen.size === 3;
  }, "the quick start's jobs to run");
  expect([...seen.values()].sort()).toEqual(["a100-small", "cpu-heavy", "h100-l4-mixed"]);

  // The dashboard and the operations endpoints are up too
  const page = await fetch(`${dev.baseUrl}/`);
  expect(await page.text()).toContain("<title>fleetq");
  expect((await fetch(`${dev.baseUrl}/readyz`)).status).toBe(200);
  const metrics = await (
    await fetch(`${dev.baseUrl}/metrics`, { headers: { authorization: `Bearer ${dev.memberToken}` } })
  ).text();
  for (const name of ["fleetq_queue_fair_share", "fleetq_outbox_backlog", "fleetq_cycle_duration_seconds"]) {
    expect(metrics).toContain(name);
  }

  // Ctrl-C stops everything cleanly. (npm itself ends by the SIGINT it got; fleetq exits 0 after
  // "stopped", printed once every part has stopped.)
  expect(cleanExit(await dev.stop())).toBe(true);
  expect(dev.output().stderr).toContain("fleetq dev: stopped");
  expect(dev.output().stderr).not.toContain("second signal");
  const log = readFileSync(path.join(clone, ".data", "dev.log"), "utf8");
  for (const part of ["agent a100-small", "workers", "api", "database"]) {
    expect(log).toContain(`"part":"${part}","msg":"stopped"`);
  }

  // Restart: the same demo, tokens and jobs; nothing created twice
  const before = { member: dev.memberToken, admin: dev.adminToken };
  dev = await startDevProcess(["npm", "start"], { cwd: clone, env });
  expect({ member: dev.memberToken, admin: dev.adminToken }).toEqual(before);
  const { queues } = await gqlOk<{ queues: { name: string }[] }>(
    `${dev.baseUrl}/graphql`,
    dev.adminToken,
    "{ queues { name } }",
  );
  expect(queues.map((q) => q.name).sort()).toEqual([
    "acme",
    "ads",
    "llm",
    "product",
    "research",
    "search",
    "vision",
  ]);
  const { jobs } = await gqlOk<{ jobs: { edges: unknown[] } }>(
    `${dev.baseUrl}/graphql`,
    dev.adminToken,
    "{ jobs { edges { cursor } } }",
  );
  expect(jobs.edges).toHaveLength(3);
  expect(cleanExit(await dev.stop())).toBe(true);
  expect(dev.output().stderr).toContain("fleetq dev: stopped");
  dev = null;
}, 900_000);
