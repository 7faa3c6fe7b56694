// The Docker image, checked without a container engine: the Dockerfile's final stage is replayed
// in a temporary directory standing for /app (test/deploy/dockerfile-replay.ts: COPY from the
// build context and the build stage's dist/, RUN `npm ci --omit=…` against the npm registry, …),
// then that directory must hold production dependencies only (package.json's devDependencies and
// whatever the lockfile reaches through them alone are absent), and it must work as
// docker-compose.yml runs it: the entry point's --version, the migrate service's command on a
// database it creates, the default command (`serve`) with the api service's environment
// (adapted: this test's PostgreSQL, Redis, a Redis prefix of its own, free ports, an admin token)
// answering /readyz, the dashboard and a GraphQL request, and the worker service's command
// answering /healthz, the demo service's command, and one demo cluster's agent service until
// its cluster is READY; all stop cleanly on SIGTERM as `docker stop` asks. And as Kubernetes runs
// it: the production overlay rendered (test/deploy/kustomize.ts), each Deployment's init container
// (migrate) and containers run with their command/args and the environment their pod spec gives
// (test/deploy/pod-spec.ts; Secrets filled with this test's database, Redis and tokens, the pod's
// name for the downward API, the ports moved to free ones here), answering the probes they declare
// and a GraphQL request, stopping within terminationGracePeriodSeconds, writing nothing outside
// their /tmp volume (readOnlyRootFilesystem; their HOME is unwritable too). The commands run with
// the image's environment only (its ENV, PATH, a HOME of their own), not the tests'; and, for the
// image's USER, when the tests run as root, as an unprivileged user (nobody) that owns neither the
// directory nor anything in it, as the image's `node` does not own /app (else as the tests' user).
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { ROOT } from "../cli/run-cli.js";
import { reserveTestDatabase, type TestDatabase } from "../helpers/db.js";
import { deleteTestKeys, TEST_REDIS_URL, testRedisPrefix } from "../helpers/redis.js";
import { runToEnd } from "../helpers/run-to-end.js";
import { freePort } from "../helpers/topology/services.js";
import { type K8sObject, kustomize, podTemplate } from "./kustomize.js";
import { containerArgv, containerEnv, containerPort, httpProbe, type Secrets } from "./pod-spec.js";
import {
  parseDockerfile,
  planFinalStage,
  type ReplayedImage,
  replayFinalStage,
  seedNpmCache,
} from "./dockerfile-replay.js";

const dockerfileText = readFileSync(path.join(ROOT, "Dockerfile"), "utf8");
const packageJson = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
  version: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
interface LockEntry {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}
const lockPackages = (
  JSON.parse(readFileSync(path.join(ROOT, "package-lock.json"), "utf8")) as {
    packages: Record<string, LockEntry>;
  }
).packages;
const compose = parse(readFileSync(path.join(ROOT, "docker-compose.yml"), "utf8"), { merge: true }) as {
  services: Record<string, { command?: string[]; environment?: Record<string, string>; volumes?: string[] }>;
};

/** The lockfile keys ("node_modules/a", "node_modules/a/node_modules/b") of the packages installed under `dir`. */
function installedPackages(dir: string, under = "node_modules"): string[] {
  const root = path.join(dir, under);
  if (!existsSync(root)) return [];
  const found: string[] = [];
  const visit = (rel: string) => {
    if (!existsSync(path.join(dir, rel, "package.json"))) return;
    found.push(rel);
    found.push(...installedPackages(dir, `${rel}/node_modules`));
  };
  for (const name of readdirSync(root)) {
    if (name.startsWith(".")) continue;
    if (name.startsWith("@")) {
      for (const scoped of readdirSync(path.join(root, name))) visit(`${under}/${name}/${scoped}`);
    } else visit(`${under}/${name}`);
  }
  return found;
}

/** Where Node.js finds `name` from the package at lockfile key `from` ("" = the project). */
function resolveInLock(from: string, name: string): string | null {
  for (let base = from; ; ) {
    const key = base ? `${base}/node_modules/${name}` : `node_modules/${name}`;
    if (lockPackages[key]) return key;
    if (!base) return null;
    const up = base.lastIndexOf("/node_modules/");
    base = up < 0 ? "" : base.slice(0, up);
  }
}

/**
 * What package.json's dependencies need, following package-lock.json's tree: `required` through
 * dependencies and required peers, `allowed` adds optional dependencies. Optional peers are not
 * followed: a package that only names prisma as an optional peer does not need it.
 */
function productionPackages(): { required: Set<string>; allowed: Set<string> } {
  const required = new Set<string>();
  const allowed = new Set<string>();
  const visit = (from: string, names: string[], optional: boolean) => {
    for (const name of names) {
      const key = resolveInLock(from, name);
      if (!key || (optional ? allowed : required).has(key)) continue;
      allowed.add(key);
      if (!optional) required.add(key);
      const e = lockPackages[key]!;
      const peers = Object.keys(e.peerDependencies ?? {}).filter(
        (p) => !e.peerDependenciesMeta?.[p]?.optional,
      );
      visit(key, [...Object.keys(e.dependencies ?? {}), ...peers], optional);
      visit(key, Object.keys(e.optionalDependencies ?? {}), true);
    }
  };
  visit("", Object.keys(packageJson.dependencies), false);
  return { required, allowed };
}

/**
 * A service's environment from docker-compose.yml with what only makes sense among the compose
 * services replaced by `values`; a URL, an interpolated secret or a port it does not know is refused.
 */
function serviceEnv(service: string, values: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(compose.services[service]?.environment ?? {})) {
    if (key in values) out[key] = values[key]!;
    else if (/\$\{|:\/\/|PORT/.test(`${key}=${value}`)) {
      throw new Error(`${service}: the replay does not know how to run ${key}=${value} outside compose`);
    } else out[key] = String(value);
  }
  return out;
}

/** The first of `paths` (files, or folders walked; repository-relative) changed after `mtimeMs`. */
function newerThan(mtimeMs: number, paths: string[]): string | null {
  for (const rel of paths) {
    const st = statSync(path.join(ROOT, rel));
    if (st.isDirectory()) {
      const found = newerThan(
        mtimeMs,
        readdirSync(path.join(ROOT, rel))
          .filter((e) => e !== "generated")
          .map((e) => `${rel}/${e}`),
      );
      if (found) return found;
    } else if (st.mtimeMs > mtimeMs) return rel;
  }
  return null;
}

interface Server {
  child: ChildProcess;
  output(): string;
  /** SIGTERM, as `docker stop` and the kubelet send; the exit code (SIGKILL after `graceMs`,
   * 30 s as `docker stop -t 30` and a pod's default terminationGracePeriodSeconds). */
  stop(graceMs?: number): Promise<number | null>;
}

/** The image's USER: as root, nobody (uid and gid 65534) if it may run this Node.js; else the tests' user. */
let runAs: { uid?: number; gid?: number } = {};

function startServer(argv: string[], cwd: string, env: Record<string, string>): Server {
  const child = spawn(argv[0]!, argv.slice(1), { cwd, env, ...runAs, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (d: Buffer) => {
    output += d.toString();
  });
  child.stderr!.on("data", (d: Buffer) => {
    output += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  return {
    child,
    output: () => output,
    stop: async (graceMs = 30_000) => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

async function untilAnswers(url: string, server: Server, timeoutMs = 90_000): Promise<Response> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (server.child.exitCode !== null) {
      throw new Error(`exited (${server.child.exitCode}) before ${url} answered:\n${server.output()}`);
    }
    const res = await fetch(url).catch(() => null);
    if (res?.ok) return res;
    if (Date.now() > end) throw new Error(`${url} did not answer in time:\n${server.output()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The migrations the image holds. */
function migrationCount(app: string): number {
  const dir = path.join(app, "prisma/migrations");
  return readdirSync(dir).filter((m) => statSync(path.join(dir, m)).isDirectory()).length;
}

/** A probe's window: its initial delay and as many periods as it may fail (Kubernetes' defaults). */
function probeWindowMs(probe: K8sObject): number {
  return (
    ((probe.initialDelaySeconds ?? 0) + (probe.periodSeconds ?? 10) * (probe.failureThreshold ?? 3)) * 1000
  );
}

/**
 * A container's environment moved from its pod's network namespace onto the test host's: each port
 * it declares is given a free port here, in the variables holding that number (a declared port no
 * variable holds could not be moved, and is refused); `shared` replaces the variables that would
 * otherwise meet other users of the tests' Redis.
 */
async function onThisMachine(
  c: K8sObject,
  env: Record<string, string>,
  shared: Record<string, string>,
): Promise<{ env: Record<string, string>; hostPort: Map<number, number> }> {
  const hostPort = new Map<number, number>();
  const out = { ...env };
  for (const { containerPort } of c.ports ?? []) {
    const port = await freePort();
    hostPort.set(containerPort, port);
    const holders = Object.keys(env).filter((k) => /PORT$/.test(k) && env[k] === String(containerPort));
    if (!holders.length)
      throw new Error(`${c.name}: no variable tells the process to serve port ${containerPort}`);
    for (const k of holders) out[k] = String(port);
  }
  for (const [k, v] of Object.entries(shared)) if (k in out) out[k] = v;
  return { env: out, hostPort };
}

/**
 * What the image's user wrote since `since` outside /tmp, i.e. what a read-only root filesystem
 * would have refused (as root the tests run the image as nobody, whose files are found by owner;
 * as the tests' own user, the unwritable app directory and HOME are the only emulation).
 */
async function writtenOutsideTmp(since: Date): Promise<string[]> {
  if (runAs.uid === undefined) return [];
  const pruned = ["/proc", "/sys", "/dev", "/tmp"].flatMap((p) => ["-path", p, "-o"]).slice(0, -1);
  const at = `@${Math.floor(since.getTime() / 1000)}`;
  const r = await runToEnd(
    "find",
    ["/", "-xdev", "(", ...pruned, ")", "-prune", "-o", "-user", String(runAs.uid), "-newermt", at, "-print"],
    { cwd: "/", env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, timeoutMs: 120_000 },
  );
  return r.stdout.split("\n").filter(Boolean);
}

/** A server's process runs as the image's user. */
function expectImageUser(server: Server): void {
  if (runAs.uid === undefined) return;
  expect(readFileSync(`/proc/${server.child.pid}/status`, "utf8")).toMatch(
    new RegExp(`^Uid:\\s+${runAs.uid}\\s`, "m"),
  );
}

/** GraphQL over HTTP at `base` with a bearer token; a response with errors fails the test. */
function graphqlClient(base: string, token: string) {
  return async (query: string, variables: Record<string, unknown> = {}) => {
    const res = await fetch(`${base}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await res.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
    expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
    return body.data!;
  };
}

/** An ADMIN creates a queue through the API and reads it back. */
async function expectQueueRoundTrip(graphql: ReturnType<typeof graphqlClient>, name: string) {
  await graphql("mutation($n: String!) { createQueue(input: { name: $n, priority: 120 }) { name } }", {
    n: name,
  });
  expect(
    await graphql("query($n: String!) { queue(name: $n) { name priority } me { role } }", { n: name }),
  ).toEqual({
    queue: { name, priority: 120 },
    me: { role: "ADMIN" },
  });
}

describe("the Dockerfile's replay", () => {
  it("refuses an instruction it does not know, before carrying anything out", () => {
    expect(() => planFinalStage(parseDockerfile(`${dockerfileText}\nHEALTHCHECK CMD true\n`))).toThrow(
      /does not know the instruction HEALTHCHECK/,
    );
    expect(() =>
      planFinalStage(parseDockerfile(dockerfileText.replace("COPY bin ./bin", "COPY --chmod=755 bin ./bin"))),
    ).toThrow(/does not know the COPY flag --chmod=755/);
    expect(() => planFinalStage(parseDockerfile(`${dockerfileText}\nRUN true\n`))).toThrow(
      /a RUN after USER/,
    );
    expect(planFinalStage(parseDockerfile(dockerfileText)).steps.length).toBeGreaterThan(0);
  });
});

describe("the Docker image (its final stage replayed without an engine)", () => {
  let work: string;
  let app: string;
  let home: string;
  let image: ReplayedImage;
  let imageEnv: Record<string, string>;
  let db: TestDatabase | null = null;
  let podDb: TestDatabase | null = null;
  const redisPrefix = testRedisPrefix("fleetq-image");
  const podRedisPrefix = testRedisPrefix("fleetq-image-pods");
  const adminToken = `fq_test_${randomBytes(16).toString("hex")}`;
  const servers: Server[] = [];

  beforeAll(async () => {
    // the build stage's dist/ is the repository's: it must have been built from these sources
    const built = path.join(ROOT, "dist/cli/main.js");
    if (!existsSync(built)) throw new Error("dist/ is missing: run `npm run build` first (`npm test` does)");
    const newer = newerThan(statSync(built).mtimeMs, [
      "src",
      "workers",
      "schema.graphql",
      "scripts/build.mjs",
    ]);
    if (newer)
      throw new Error(`dist/ is older than ${newer}: run \`npm run build\` first (\`npm test\` does)`);
    if (process.getuid?.() === 0) {
      const nobody = { uid: 65534, gid: 65534 };
      const probe = await runToEnd(process.execPath, ["-e", ""], {
        cwd: "/",
        env: {},
        timeoutMs: 30_000,
        ...nobody,
      }).catch(() => null);
      if (probe?.code === 0) runAs = nobody;
    }
    work = mkdtempSync(path.join(tmpdir(), "fleetq-image-"));
    app = path.join(work, "app");
    home = path.join(work, "home");
    mkdirSync(app);
    mkdirSync(home);
    // The npm cache lives in the image's HOME (npm cache clean empties it there); it starts with
    // links to the packages this checkout's install downloaded, when there are any.
    seedNpmCache(process.env.npm_config_cache || path.join(homedir(), ".npm"), path.join(home, ".npm"));
    const pass = (names: string[]) =>
      Object.fromEntries(names.filter((n) => process.env[n]).map((n) => [n, process.env[n]!]));
    const baseEnv = {
      // the Node.js of the tests stands for the base image's
      PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}`,
      HOME: home,
      // what a build gets from its host: the registry and proxies
      ...pass(["npm_config_registry", "NPM_CONFIG_REGISTRY", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"]),
      ...pass(["http_proxy", "https_proxy", "no_proxy"]),
    };
    image = await replayFinalStage(dockerfileText, {
      context: ROOT,
      dir: app,
      baseEnv,
      runTimeoutMs: 300_000,
    });
    // the image's user has a HOME of its own (Docker sets it from the user's entry); it can read the
    // directory, as everyone can read /app, and write nowhere in it
    const userHome = path.join(work, "user-home");
    mkdirSync(userHome);
    chmodSync(work, 0o755);
    chmodSync(app, 0o755);
    if (runAs.uid !== undefined) chownSync(userHome, runAs.uid, runAs.gid!);
    imageEnv = { ...baseEnv, ...image.env, HOME: userHome };
  }, 360_000);

  afterAll(async () => {
    await Promise.allSettled(servers.map((s) => s.stop()));
    await db?.drop().catch(() => {});
    await podDb?.drop().catch(() => {});
    await deleteTestKeys(redisPrefix).catch(() => {});
    await deleteTestKeys(podRedisPrefix).catch(() => {});
    if (work) rmSync(work, { recursive: true, force: true });
  }, 120_000);

  it("was replayed, skipping only what cannot apply outside a container", () => {
    expect(image.workdir).toBe("/app");
    expect(image.env.NODE_ENV).toBe("production");
    expect(image.skipped.map((s) => s.replace(/: .*/, ""))).toEqual([
      "RUN mkdir -p /var/lib/fleetq/tokens",
      "RUN chown -R node:node /var/lib/fleetq",
    ]);
    expect(image.user).toBe("node");
    for (const file of ["bin/fleetq.mjs", "dist/cli/main.js", "prisma/schema.prisma", "schema.graphql"]) {
      expect(existsSync(path.join(app, file)), file).toBe(true);
    }
    expect(existsSync(path.join(app, "src")), "no sources").toBe(false);
  });

  it("holds production dependencies only", () => {
    const installed = installedPackages(app);
    const { required, allowed } = productionPackages();
    expect(
      installed.filter((p) => !allowed.has(p)),
      "installed, but no production dependency needs it (devDependencies, optional peers)",
    ).toEqual([]);
    expect(
      Object.keys(packageJson.devDependencies).filter(
        (n) => existsSync(path.join(app, "node_modules", n)) && !allowed.has(`node_modules/${n}`),
      ),
      "devDependencies",
    ).toEqual([]);
    expect(
      [...required].filter((p) => !installed.includes(p)),
      "needed by the production dependencies, not installed",
    ).toEqual([]);
  });

  it("answers --version through its entry point", async () => {
    const r = await runToEnd(image.entrypoint[0]!, [...image.entrypoint.slice(1), "--version"], {
      cwd: app,
      env: imageEnv,
      timeoutMs: 60_000,
      ...runAs,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(packageJson.version);
  });

  it("migrates a database it creates, with the migrate service's command", async () => {
    db = reserveTestDatabase();
    const r = await runToEnd(
      image.entrypoint[0]!,
      [...image.entrypoint.slice(1), ...compose.services.migrate!.command!],
      {
        cwd: app,
        env: {
          ...imageEnv,
          ...serviceEnv("migrate", {
            DATABASE_URL: db.url,
            REDIS_URL: TEST_REDIS_URL,
            FLEETQ_REDIS_PREFIX: redisPrefix,
          }),
        },
        timeoutMs: 120_000,
        ...runAs,
      },
    );
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toContain(`applied ${migrationCount(app)} migration(s)`);
  }, 150_000);

  it("serves the API with its default command, runs the workers, the demo and an agent; all stop cleanly", async () => {
    expect(db, "migrated database").not.toBeNull();
    expect(compose.services.api!.command).toEqual(image.cmd);
    const [apiPort, workerPort] = [await freePort(), await freePort()];
    const values = {
      DATABASE_URL: db!.url,
      REDIS_URL: TEST_REDIS_URL,
      FLEETQ_REDIS_PREFIX: redisPrefix,
      // the bind queues under this test's prefix too: the tests' Redis is shared
      FLEETQ_BIND_QUEUE_PREFIX: `${redisPrefix}bind`,
      FLEETQ_PORT: String(apiPort),
      FLEETQ_ADMIN_TOKEN: adminToken,
      FLEETQ_BIND_SECRET: "a-bind-secret-of-the-image-test",
      FLEETQ_URL: `http://127.0.0.1:${apiPort}`,
      FLEETQ_API_URL: `http://127.0.0.1:${apiPort}/graphql`,
      FLEETQ_TOKEN: adminToken,
      FLEETQ_WORKER_PORT: String(workerPort),
    };
    const api = startServer([...image.entrypoint, ...image.cmd], app, {
      ...imageEnv,
      ...serviceEnv("api", values),
      // The tests' Redis has no password: serve and worker refuse it without this.
      FLEETQ_INSECURE_REDIS: "1",
    });
    servers.push(api);
    const worker = startServer([...image.entrypoint, ...compose.services.worker!.command!], app, {
      ...imageEnv,
      ...serviceEnv("worker", values),
      FLEETQ_INSECURE_REDIS: "1",
    });
    servers.push(worker);

    expectImageUser(api);
    expectImageUser(worker);
    const base = `http://127.0.0.1:${apiPort}`;
    expect(await (await untilAnswers(`${base}/readyz`, api)).json()).toMatchObject({ status: "ready" });
    await untilAnswers(`http://127.0.0.1:${workerPort}/healthz`, worker);

    // the dashboard's page and its bundled script
    expect((await fetch(`${base}/`)).status).toBe(200);
    const script = await fetch(`${base}/dashboard/app.js`);
    expect(script.status, await script.clone().text()).toBe(200);

    const graphql = graphqlClient(base, adminToken);
    await expectQueueRoundTrip(graphql, "image-check");

    // The demo service writes the agents' tokens into the tokens volume, here a directory the
    // image's user may write; agent-acl is not run (its Redis users would be the shared Redis's):
    // the agent's Redis URL file, which it writes there, holds the tests' Redis URL instead.
    const [volume, mountPath] = compose.services.demo!.volumes![0]!.split(":");
    const tokensDir = path.join(work, `volume-${volume}`);
    mkdirSync(tokensDir);
    if (runAs.uid !== undefined) chownSync(tokensDir, runAs.uid, runAs.gid!);
    const inVolume = (args: string[]) => args.map((a) => a.replaceAll(mountPath!, tokensDir));
    const demo = await runToEnd(
      image.entrypoint[0]!,
      [...image.entrypoint.slice(1), ...inVolume(compose.services.demo!.command!)],
      { cwd: app, env: { ...imageEnv, ...serviceEnv("demo", values) }, timeoutMs: 120_000, ...runAs },
    );
    expect(demo.code, `${demo.stdout}\n${demo.stderr}`).toBe(0);
    expect(demo.stdout).toContain("demo ready");

    const agentService = Object.keys(compose.services).find((n) => /^agent-(?!acl$)/.test(n))!;
    const cluster = compose.services[agentService]!.environment!.CLUSTER!;
    const agentArgs = inVolume(compose.services[agentService]!.command!);
    const redisUrlFile = /^--redis-url-file=(.+)$/.exec(
      agentArgs.find((a) => a.startsWith("--redis-url-file="))!,
    )![1]!;
    writeFileSync(redisUrlFile, `${TEST_REDIS_URL}\n`);
    const agent = startServer([...image.entrypoint, ...agentArgs], app, {
      ...imageEnv,
      ...serviceEnv(agentService, values),
    });
    servers.push(agent);
    const deadline = Date.now() + 90_000;
    for (;;) {
      const data = await graphql("query($c: String!) { cluster(name: $c) { state } }", { c: cluster });
      if ((data.cluster as { state: string }).state === "READY") break;
      if (agent.child.exitCode !== null || Date.now() > deadline) {
        throw new Error(`cluster ${cluster} not READY (agent: ${agent.child.exitCode}):\n${agent.output()}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }

    const [apiCode, workerCode, agentCode] = await Promise.all([api.stop(), worker.stop(), agent.stop()]);
    expect(apiCode, api.output()).toBe(0);
    expect(workerCode, worker.output()).toBe(0);
    expect(agentCode, agent.output()).toBe(0);
  }, 300_000);

  it("runs the production overlay's pods: the init containers migrate, the API and the workers answer their probes and stop within their grace period", async () => {
    const rendered = kustomize(path.join(ROOT, "deploy/kubernetes/overlays/production"));
    const deployments = rendered.filter((o) => o.kind === "Deployment");
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual(["fleetq-api", "fleetq-worker"]);
    podDb = reserveTestDatabase();
    const secrets: Secrets = {
      fleetq: {
        "database-url": podDb.url,
        "redis-url": TEST_REDIS_URL,
        "bind-secret": "a-bind-secret-of-the-image-test",
        "admin-token": adminToken,
      },
    };
    const shared = {
      FLEETQ_REDIS_PREFIX: podRedisPrefix,
      FLEETQ_BIND_QUEUE_PREFIX: `${podRedisPrefix}bind`,
    };
    // A read-only root filesystem: the user's HOME (the image's /home/node) is not writable either;
    // the /tmp volume is the test host's /tmp.
    const readOnlyHome = path.join(work, "read-only-home");
    mkdirSync(readOnlyHome, { recursive: true });
    chmodSync(readOnlyHome, 0o555);
    const start = async (d: K8sObject, pod: string, c: K8sObject) => {
      for (const m of c.volumeMounts ?? []) {
        const volume = podTemplate(d)!.spec.volumes.find((v: K8sObject) => v.name === m.name);
        expect([m.mountPath, Object.keys(volume)], `${pod} ${c.name}: a mount the replay has`).toEqual([
          "/tmp",
          ["name", "emptyDir"],
        ]);
      }
      const env = containerEnv(rendered, c, {
        secrets,
        fields: { "metadata.name": pod, "metadata.namespace": d.metadata.namespace },
      });
      const moved = await onThisMachine(c, env, shared);
      const home = c.securityContext?.readOnlyRootFilesystem ? readOnlyHome : imageEnv.HOME!;
      return {
        argv: containerArgv(image, c, moved.env),
        // The tests' Redis has no password: serve and worker refuse it without this.
        env: {
          ...imageEnv,
          HOME: home,
          ...moved.env,
          ...(moved.env.REDIS_URL ? { FLEETQ_INSECURE_REDIS: "1" } : {}),
        },
        hostPort: moved.hostPort,
      };
    };

    const startedAt = new Date();
    const running: {
      pod: string;
      c: K8sObject;
      server: Server;
      hostPort: Map<number, number>;
      graceMs: number;
    }[] = [];
    for (const [i, d] of deployments.entries()) {
      const { spec } = podTemplate(d)!;
      const pod = `${d.metadata.name}-5d8f7c9b64-${["x2k4q", "p7n3m"][i]}`;
      for (const init of spec.initContainers ?? []) {
        const { argv, env } = await start(d, pod, init);
        const r = await runToEnd(argv[0]!, argv.slice(1), { cwd: app, env, timeoutMs: 120_000, ...runAs });
        expect(r.code, `${pod} ${init.name}:\n${r.stdout}\n${r.stderr}`).toBe(0);
        // the first pod's init container migrates the new database, the next finds nothing to apply
        if (i === 0) expect(r.stdout).toContain(`applied ${migrationCount(app)} migration(s)`);
        else expect(r.stdout).toContain("is up to date");
      }
      for (const c of spec.containers) {
        const { argv, env, hostPort } = await start(d, pod, c);
        const server = startServer(argv, app, env);
        servers.push(server);
        running.push({
          pod,
          c,
          server,
          hostPort,
          graceMs: (spec.terminationGracePeriodSeconds ?? 30) * 1000,
        });
      }
    }
    expect(running.map((r) => r.c.args)).toEqual([["serve"], ["worker"]]);

    for (const { pod, c, server, hostPort } of running) {
      expectImageUser(server);
      // the startup probe first (the others wait for it), each within the time the kubelet gives it
      for (const which of ["startupProbe", "readinessProbe", "livenessProbe"]) {
        expect(c[which], `${pod} ${c.name} ${which}`).toBeDefined();
        const probe = httpProbe(c, c[which]);
        const url = `${probe.scheme}://127.0.0.1:${hostPort.get(probe.port)}${probe.path}`;
        await untilAnswers(url, server, probeWindowMs(c[which]));
      }
    }
    const api = running.find((r) => r.c.args[0] === "serve")!;
    const graphql = graphqlClient(
      `http://127.0.0.1:${api.hostPort.get(containerPort(api.c, "http"))}`,
      adminToken,
    );
    await expectQueueRoundTrip(graphql, "pod-check");

    const codes = await Promise.all(running.map((r) => r.server.stop(r.graceMs)));
    for (const [i, r] of running.entries()) expect(codes[i], `${r.pod}:\n${r.server.output()}`).toBe(0);
    expect(await writtenOutsideTmp(startedAt), "written outside the /tmp volume").toEqual([]);
  }, 420_000);
});
