// docker-compose.yml stays in step with the CLI, the npm scripts and the demo: every fleetq service
// runs a command (and flags) the CLI has, npm entrypoints name real scripts, files exist, the demo's
// clusters each have an agent, and the long-running services have health checks. `docker compose
// config` validates it where the Docker client has the compose plugin; without it only that one
// check is skipped.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { agentRedisUrlFile } from "../../src/cli/commands/agent-acl.js";
import { DEMO_CLUSTER_FILES } from "../../src/cli/demo/demo-plan.js";
import { buildProgram } from "../../src/cli/program.js";
import { ROOT } from "../cli/run-cli.js";

interface Service {
  image?: string;
  build?: unknown;
  entrypoint?: string[];
  command?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
}

const composeFile = path.join(ROOT, "docker-compose.yml");
// merge: true resolves the `<<: *anchor` keys as compose does
const compose = parse(readFileSync(composeFile, "utf8"), { merge: true }) as {
  services: Record<string, Service>;
};
const services = compose.services;
const scripts = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")).scripts as Record<
  string,
  string
>;
const fleetqServices = Object.entries(services).filter(([, s]) => s.build);

function subcommand(program: Command, name: string): Command {
  const cmd = program.commands.find((c) => c.name() === name);
  expect(cmd, `fleetq ${name}`).toBeDefined();
  return cmd!;
}

describe("docker-compose.yml", () => {
  it("has the services of the demo: postgres, redis, migrate, api, worker, demo, agent-acl, one agent per demo cluster", () => {
    const clusters = DEMO_CLUSTER_FILES.map((f) => f.replace(/\.yaml$/, ""));
    expect(Object.keys(services).sort()).toEqual(
      [
        "postgres",
        "redis",
        "migrate",
        "api",
        "worker",
        "demo",
        "agent-acl",
        ...clusters.map((c) => `agent-${c}`),
      ].sort(),
    );
  });

  it("runs the fleetq image with commands and flags the CLI has, and npm scripts that exist", () => {
    const dockerfile = readFileSync(path.join(ROOT, "Dockerfile"), "utf8");
    expect(dockerfile).toContain('ENTRYPOINT ["node", "bin/fleetq.mjs"]');
    expect(existsSync(path.join(ROOT, "bin/fleetq.mjs"))).toBe(true);
    const program = buildProgram();
    for (const [name, s] of fleetqServices) {
      if (s.entrypoint) {
        // npm run <script>
        expect(s.entrypoint.slice(0, 2), name).toEqual(["npm", "run"]);
        expect(scripts[s.entrypoint[2]!], `${name}: npm script ${s.entrypoint[2]}`).toBeDefined();
        continue;
      }
      const [command, ...args] = s.command!;
      const cmd = subcommand(program, command!);
      const known = new Set(cmd.options.map((o) => o.long));
      for (const arg of args.filter((a) => a.startsWith("--"))) {
        expect(known.has(arg.split("=")[0]), `${name}: fleetq ${command} ${arg}`).toBe(true);
        const file = /^--cluster-file=(.+)$/.exec(arg)?.[1];
        if (file) expect(existsSync(path.join(ROOT, file)), `${name}: ${file}`).toBe(true);
      }
    }
  });

  it("gives each demo cluster an agent with its cluster file and the token the demo service writes", () => {
    for (const file of DEMO_CLUSTER_FILES) {
      const cluster = file.replace(/\.yaml$/, "");
      const agent = services[`agent-${cluster}`]!;
      expect(agent.command).toEqual([
        "agent",
        `--cluster=${cluster}`,
        "--backend=simulated",
        `--cluster-file=examples/clusters/${file}`,
        `--token-file=/var/lib/fleetq/tokens/agent-${cluster}.token`,
        `--redis-url-file=${agentRedisUrlFile("/var/lib/fleetq/tokens", cluster)}`,
      ]);
      expect(agent.environment?.CLUSTER).toBe(cluster);
      expect(agent.depends_on?.demo?.condition).toBe("service_completed_successfully");
      expect(agent.depends_on?.["agent-acl"]?.condition).toBe("service_completed_successfully");
    }
    expect(services.demo!.command).toEqual(["demo", "--tokens-dir", "/var/lib/fleetq/tokens"]);
    // the agents' Redis users, their URLs written where the agents read them
    expect(services["agent-acl"]!.command).toEqual([
      "agent-acl",
      ...DEMO_CLUSTER_FILES.map((f) => f.replace(/\.yaml$/, "")),
      "--apply",
      "--url-dir=/var/lib/fleetq/tokens",
    ]);
    expect(services["agent-acl"]!.volumes).toEqual(["tokens:/var/lib/fleetq/tokens"]);
  });

  it("has health checks on every long-running service, and dependencies on real services", () => {
    for (const name of [
      "postgres",
      "redis",
      "api",
      "worker",
      ...DEMO_CLUSTER_FILES.map((f) => `agent-${f.replace(/\.yaml$/, "")}`),
    ]) {
      expect(services[name]!.healthcheck?.test, name).toBeDefined();
    }
    expect(services.api!.healthcheck!.test.join(" ")).toContain("/readyz");
    expect(services.worker!.healthcheck!.test.join(" ")).toContain(
      `${services.worker!.environment!.FLEETQ_WORKER_PORT}/healthz`,
    );
    for (const [name, s] of Object.entries(services)) {
      for (const dep of Object.keys(s.depends_on ?? {}))
        expect(services[dep], `${name} depends on ${dep}`).toBeDefined();
    }
    // the same database and Redis for the API and the workers, as `fleetq dev` shares them
    expect(services.api!.environment!.DATABASE_URL).toBe(services.worker!.environment!.DATABASE_URL);
    expect(services.api!.environment!.REDIS_URL).toBe(services.worker!.environment!.REDIS_URL);
    expect(services.api!.environment!.FLEETQ_REDIS_PREFIX).toBe(
      services.worker!.environment!.FLEETQ_REDIS_PREFIX,
    );
  });

  const hasComposePlugin = spawnSync("docker", ["compose", "version"], { encoding: "utf8" }).status === 0;
  it.skipIf(!hasComposePlugin)(
    "is valid for `docker compose config` (skipped: no compose plugin in this Docker client)",
    () => {
      const out = execFileSync("docker", ["compose", "-f", composeFile, "config", "--quiet"], {
        encoding: "utf8",
      });
      expect(out).toBe("");
    },
  );
});
