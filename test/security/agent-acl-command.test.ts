// The arrangement docker compose uses: Redis's default user behind a password only the control
// plane has, and `fleetq agent-acl … --apply --url-dir DIR` giving each agent a user of its own,
// its URL in a file the agent reads (--redis-url-file). Runs its own redis-server.
import { readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentKeyPatterns, agentRedisUser } from "../../src/protocol/agent-redis-acl.js";
import { runCli } from "../cli/run-cli.js";
import { OwnRedis } from "../helpers/topology/services.js";
import { tempDir } from "../helpers/temp-dir.js";

let server: OwnRedis;
const connections: Redis[] = [];

const connect = (url: string) => {
  const r = new Redis(url, {
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    lazyConnect: true,
    enableReadyCheck: false,
  });
  r.on("error", () => {});
  connections.push(r);
  return r;
};

/** A key of the cluster's bind queue (what its agent may touch). */
const queueKey = (cluster: string) => agentKeyPatterns(cluster)[0]!.replace("*", "probe");

beforeAll(async () => {
  server = await OwnRedis.start({ password: "control-plane-secret" });
});

afterAll(async () => {
  for (const r of connections) r.disconnect();
  await server?.stop();
});

describe("fleetq agent-acl --apply --url-dir", () => {
  it("sets one user per cluster and writes each agent's URL; each reaches only its own keys", async () => {
    const dir = tempDir("fleetq-agent-acl", "test");
    const r = await runCli([
      "agent-acl",
      "east",
      "west",
      "--apply",
      "--redis-url",
      server.url,
      "--url-dir",
      dir,
    ]);
    expect(r.stderr).toContain(`Redis user ${agentRedisUser("west")} set`);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("");
    const urls = Object.fromEntries(
      ["east", "west"].map((c) => {
        const file = path.join(dir, `redis-agent-${c}.url`);
        expect(statSync(file).mode & 0o777).toBe(0o600);
        return [c, readFileSync(file, "utf8").trim()];
      }),
    );
    expect(new URL(urls.east!).username).toBe(agentRedisUser("east"));
    expect(urls.east).not.toContain("control-plane-secret");

    const east = connect(urls.east!);
    await east.connect();
    expect(await east.set(queueKey("east"), "1")).toBe("OK");
    await expect(east.set(queueKey("west"), "1")).rejects.toThrow(/NOPERM/);
    const west = connect(urls.west!);
    await west.connect();
    expect(await west.get(queueKey("west"))).toBeNull();
  });

  it("the default user needs the control plane's password", async () => {
    const anonymous = connect(`redis://127.0.0.1:${server.port}`);
    const errors: string[] = [];
    anonymous.on("error", (e: Error) => errors.push(e.message));
    await expect(anonymous.connect().then(() => anonymous.get(queueKey("east")))).rejects.toThrow();
    expect(errors.join("\n")).toMatch(/NOAUTH/);
  });

  it("refuses --url-dir without --apply, naming the option", async () => {
    const r = await runCli(["agent-acl", "east", "--url-dir", tmpdir()]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/--url-dir needs --apply/);
  });
});

describe("fleetq agent --redis-url-file", () => {
  it("refuses a file it cannot read, naming the option and the file", async () => {
    const file = path.join(tmpdir(), "fleetq-no-such-redis-url-file");
    const r = await runCli([
      "agent",
      "--cluster",
      "east",
      "--backend",
      "simulated",
      "--redis-url-file",
      file,
    ]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`--redis-url-file: cannot read ${file}`);
  });
});
