// docker compose has no default admin token or Redis password, publishes nothing beyond this
// host, and gives each agent a Redis user of its own instead of the control plane's.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { ROOT } from "../cli/run-cli.js";

const text = readFileSync(path.join(ROOT, "docker-compose.yml"), "utf8");
interface Service {
  ports?: string[];
  command?: string[];
  environment?: Record<string, string>;
}
const services = (parse(text, { merge: true }) as { services: Record<string, Service> }).services;

describe("docker-compose.yml defaults", () => {
  it("requires FLEETQ_ADMIN_TOKEN: every use fails without it instead of falling back to a known secret", () => {
    const uses = [...text.matchAll(/\$\{FLEETQ_ADMIN_TOKEN([^}]*)\}/g)];
    expect(uses.length).toBeGreaterThan(0);
    for (const [, rest] of uses) expect(rest).toMatch(/^:\?/);
    expect(text).not.toContain("change-me");
  });

  it("requires FLEETQ_REDIS_PASSWORD: Redis's default user needs it, and only the control plane has it", () => {
    const uses = [...text.matchAll(/\$\{FLEETQ_REDIS_PASSWORD([^}]*)\}/g)];
    expect(uses.length).toBeGreaterThan(0);
    for (const [, rest] of uses) expect(rest).toMatch(/^:\?/);
    const redis = services.redis!.command!;
    expect(redis[redis.indexOf("--requirepass") + 1]).toMatch(/^\$\{FLEETQ_REDIS_PASSWORD:\?/);
    for (const name of ["api", "worker", "migrate", "agent-acl"])
      expect(services[name]!.environment!.REDIS_URL, name).toMatch(
        /^redis:\/\/:\$\{FLEETQ_REDIS_PASSWORD:\?[^}]*\}@redis:6379$/,
      );
  });

  it("gives each agent its own Redis user: no Redis URL or password in its environment, its own URL file", () => {
    const agents = Object.entries(services).filter(([, s]) => s.command?.[0] === "agent");
    expect(agents.length).toBeGreaterThan(0);
    const acl = services["agent-acl"]!.command!;
    const dir = acl.find((a) => a.startsWith("--url-dir="))!.slice("--url-dir=".length);
    for (const [name, s] of agents) {
      const env = JSON.stringify(s.environment ?? {});
      expect(env, name).not.toMatch(/REDIS_URL|REDIS_PASSWORD/);
      const cluster = s.command!.find((a) => a.startsWith("--cluster="))!.slice("--cluster=".length);
      expect(acl, `agent-acl sets the user of ${cluster}`).toContain(cluster);
      expect(s.command, name).toContain(`--redis-url-file=${dir}/redis-agent-${cluster}.url`);
    }
  });

  it("requires FLEETQ_BIND_SECRET: the API and the workers share it to sign bind requests; agents never get it", () => {
    const uses = [...text.matchAll(/\$\{FLEETQ_BIND_SECRET([^}]*)\}/g)];
    expect(uses.length).toBeGreaterThan(0);
    for (const [, rest] of uses) expect(rest).toMatch(/^:\?/);
    const api = services.api!.environment!.FLEETQ_BIND_SECRET;
    expect(api).toMatch(/^\$\{FLEETQ_BIND_SECRET:\?/);
    expect(services.worker!.environment!.FLEETQ_BIND_SECRET).toBe(api);
    for (const [name, s] of Object.entries(services).filter(([, s]) => s.command?.[0] === "agent"))
      expect(JSON.stringify(s.environment ?? {}), name).not.toContain("FLEETQ_BIND_SECRET");
  });

  it("publishes ports on 127.0.0.1 only", () => {
    const published = Object.values(services).flatMap((s) => s.ports ?? []);
    expect(published.length).toBeGreaterThan(0);
    for (const p of published) expect(p).toMatch(/^127\.0\.0\.1:/);
  });
});
