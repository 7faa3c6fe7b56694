// The client package (packages/cli, bundled by `npm run build`) as a pipeline gets it: packed with
// `npm pack`, installed offline from the tarball into an empty prefix, and run from a folder
// outside the repository with an environment of its own (no NODE_PATH, a HOME of its own), where
// none of the repository's packages resolve. Its `fleetq --version`, `submit --wait` and `logs`
// work against the real API with workers and a simulated cluster; the commands that run the
// control plane answer where they are; the tarball holds the bundle only, needing no package but
// Node's own, and nothing of the database, Redis, the server or the scheduling core.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type CliControlPlane, startCliControlPlane } from "../cli/control-plane.js";
import { ROOT } from "../cli/run-cli.js";
import { runToEnd } from "../helpers/run-to-end.js";
import { tempDir } from "../helpers/temp-dir.js";

vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });

const PACKAGE_DIR = path.join(ROOT, "packages", "cli");
const dir = tempDir("fleetq-cli-package");
const prefix = path.join(dir, "prefix");
const work = path.join(dir, "work");
const installed = path.join(prefix, "lib", "node_modules", "fleetq");
const fleetqBin = path.join(prefix, "bin", "fleetq");

/** The tarball's files, as `npm pack --json` lists them. */
let packed: string[] = [];
let cp: CliControlPlane;

/** npm, with a cache of the test's own and no registry to reach. */
function npm(args: string[]) {
  return runToEnd(
    "npm",
    [...args, "--offline", "--no-audit", "--no-fund", "--cache", path.join(dir, "npm-cache")],
    {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", HOME: path.join(dir, "home") },
      timeoutMs: 120_000,
    },
  );
}

/** The installed `fleetq`, with Node on PATH and nothing else of this process's environment. */
function fleetq(args: string[], env: Record<string, string> = {}) {
  return runToEnd(fleetqBin, args, {
    cwd: work,
    env: {
      PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`,
      HOME: path.join(dir, "home"),
      XDG_CONFIG_HOME: path.join(dir, "config"),
      ...env,
    },
    timeoutMs: 180_000,
  });
}

beforeAll(async () => {
  if (!existsSync(path.join(PACKAGE_DIR, "dist", "fleetq.js")))
    throw new Error("packages/cli/dist is not built: run `npm run build`");
  for (const d of [work, path.join(dir, "home")]) mkdirSync(d);
  const pack = await npm(["pack", PACKAGE_DIR, "--pack-destination", dir, "--json"]);
  expect(pack.stderr).not.toMatch(/ERR/);
  expect(pack.code).toBe(0);
  const [info] = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[];
  packed = info!.files.map((f) => f.path);
  const install = await npm(["install", "-g", "--prefix", prefix, path.join(dir, info!.filename)]);
  expect(install.stderr).not.toMatch(/ERR/);
  expect(install.code).toBe(0);
  cp = await startCliControlPlane();
});
afterAll(async () => cp?.close());

describe("the tarball", () => {
  it("holds the bundle, a package.json without dependencies of the repository's version, and a README", () => {
    expect(packed).toContain("package.json");
    expect(packed).toContain("README.md");
    expect(packed).toContain("dist/fleetq.js");
    expect(packed.filter((f) => !/^(package\.json|README\.md|dist\/[\w-]+\.js)$/.test(f))).toEqual([]);
    const manifest = JSON.parse(readFileSync(path.join(installed, "package.json"), "utf8"));
    for (const deps of ["dependencies", "optionalDependencies", "peerDependencies"])
      expect(manifest[deps], deps).toBeUndefined();
    const root = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8"));
    expect(manifest.version).toBe(root.version);
  });

  it("imports nothing but Node's modules and its own files; no database, Redis, server or core code", () => {
    const own = new Set(packed);
    const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
    // ws's optional native speed-ups, required inside a try: absent, ws does without
    const optional = new Set(["bufferutil", "utf-8-validate"]);
    const strange: string[] = [];
    for (const file of packed.filter((f) => f.endsWith(".js"))) {
      const code = readFileSync(path.join(installed, file), "utf8");
      const specifiers = code.matchAll(/(?:\bfrom|\bimport\(?|\brequire\()\s*"([@\w./:-]+)"/g);
      for (const [, spec] of specifiers) {
        const local = spec!.startsWith("./") && own.has(path.posix.join("dist", spec!));
        if (!local && !builtins.has(spec!) && !optional.has(spec!)) strange.push(`${file}: ${spec}`);
      }
      for (const marker of [
        "PrismaClient",
        "PGlite",
        "bullmq",
        "ioredis",
        "ApolloServer",
        "KubeConfig",
        "startWorkers",
      ])
        expect(code.includes(marker), `${file} holds ${marker}`).toBe(false);
    }
    expect(strange).toEqual([]);
  });
});

describe("the installed command", () => {
  it("runs where the repository's packages do not resolve", async () => {
    expect(path.relative(ROOT, work).startsWith("..")).toBe(true);
    const r = await runToEnd(process.execPath, ["-e", "require.resolve('commander')"], {
      cwd: installed,
      env: { PATH: "/usr/bin:/bin" },
      timeoutMs: 30_000,
    });
    expect(r.stderr).toContain("Cannot find module 'commander'");
  });

  it("fleetq --version prints the package's version", async () => {
    const r = await fleetq(["--version"]);
    expect(r.stderr).toBe("");
    expect(r.stdout.trim()).toBe(
      JSON.parse(readFileSync(path.join(PACKAGE_DIR, "package.json"), "utf8")).version,
    );
    expect(r.code).toBe(0);
  });

  it("submit --wait follows the job to success; logs prints its pod's lines", async () => {
    const spec = path.join(work, "job.yaml");
    writeFileSync(
      spec,
      `name: from-the-package
queue: team-a
tasks:
  - { name: worker, replicas: 1, resources: { cpu: "1", memory: 1Gi }, durationSeconds: 2,
      template: { spec: { containers: [{ name: main, image: busybox, command: [echo, hello] }] } } }
`,
    );
    const api = { FLEETQ_URL: cp.baseUrl, FLEETQ_TOKEN: cp.member };
    const submitted = await fleetq(["submit", "job.yaml", "--wait", "--timeout", "3m"], api);
    expect(submitted.stderr).toMatch(/job from-the-package \([0-9a-f-]+\) SUCCEEDED/);
    // followed live through the subscription (the bundled graphql-ws and ws), not by polling
    expect(submitted.stderr).not.toContain("live updates");
    expect(submitted.code).toBe(0);
    const id = submitted.stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);

    const logs = await fleetq(["logs", id], api);
    expect(logs.stderr).toBe("");
    const lines = logs.stdout.trim().split("\n");
    expect(lines[0]).toBe("+ echo hello");
    expect(lines.at(-1)).toBe("exited with code 0");
    expect(logs.code).toBe(0);
  });

  it("the CI examples install this package at its version, and every command they run is in it", async () => {
    const version = JSON.parse(readFileSync(path.join(PACKAGE_DIR, "package.json"), "utf8")).version;
    for (const example of ["github-actions.yml", "gitlab-ci.yml"]) {
      const text = readFileSync(path.join(ROOT, "examples", "jobs", example), "utf8");
      expect(text, example).toContain(`npm install -g fleetq@${version}`);
      expect(text, example).not.toMatch(/npm ci|npx fleetq/);
      const commands = new Set([...text.matchAll(/^\s*(?:- (?:run: )?)?fleetq (\w+)/gm)].map((m) => m[1]!));
      expect(commands.size, example).toBeGreaterThan(0);
      for (const command of commands) {
        const help = await fleetq([command, "--help"]);
        expect(help.stdout, `${example}: fleetq ${command}`).toContain(`Usage: fleetq ${command}`);
        expect(help.code).toBe(0);
      }
    }
  });

  it("the commands that run the control plane say they are in the server image; exit 3", async () => {
    for (const args of [["serve", "--port", "0"], ["worker"], ["migrate"], ["simulate", "x.yaml"]]) {
      const r = await fleetq(args);
      expect(r.stderr).toContain(`\`fleetq ${args[0]}\` is not in the fleetq client package`);
      expect(r.stderr).toContain("server image");
      expect(r.code).toBe(3);
    }
    const admin = await fleetq(["token", "create", "--admin"], { DATABASE_URL: cp.db.url });
    expect(admin.stderr).toContain("`fleetq token create --admin` is not in the fleetq client package");
    expect(admin.code).toBe(3);
    const help = await fleetq(["--help"]);
    expect(help.stdout).toContain("submit");
    expect(help.stdout.replace(/\s+/g, " ")).toContain(
      "The commands that run the control plane (dev, serve, migrate, worker, agent, agent-acl, demo, simulate) are in the server image",
    );
  });
});
