// docker compose has no default admin token and publishes nothing beyond this host.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { ROOT } from "../cli/run-cli.js";

const text = readFileSync(path.join(ROOT, "docker-compose.yml"), "utf8");
const services = (parse(text, { merge: true }) as { services: Record<string, { ports?: string[] }> })
  .services;

describe("docker-compose.yml defaults", () => {
  it("requires FLEETQ_ADMIN_TOKEN: every use fails without it instead of falling back to a known secret", () => {
    const uses = [...text.matchAll(/\$\{FLEETQ_ADMIN_TOKEN([^}]*)\}/g)];
    expect(uses.length).toBeGreaterThan(0);
    for (const [, rest] of uses) expect(rest).toMatch(/^:\?/);
    expect(text).not.toContain("change-me");
  });

  it("publishes ports on 127.0.0.1 only", () => {
    const published = Object.values(services).flatMap((s) => s.ports ?? []);
    expect(published.length).toBeGreaterThan(0);
    for (const p of published) expect(p).toMatch(/^127\.0\.0\.1:/);
  });
});
