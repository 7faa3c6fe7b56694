// How `fleetq dev` finds Redis: REDIS_URL; else one on the probed address (127.0.0.1:6379 in real
// use); else redis-server from PATH, started on a free port with its data in the state folder and
// stopped with dev; else an error that says exactly how to get one. Real redis-server processes.
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { findOnPath, localRedis, NO_REDIS_MESSAGE, redisAnswers } from "../../src/cli/dev/local-redis.js";
import { CliError } from "../../src/cli/exit-codes.js";
import { TEST_REDIS_URL } from "../helpers/redis.js";
import { tempDir } from "../helpers/temp-dir.js";

const nobodyListens = "redis://127.0.0.1:9";
const stateDir = () => tempDir("fleetq-dev-state", "test");

describe("Redis for fleetq dev", () => {
  it("REDIS_URL wins and is left alone", async () => {
    const r = await localRedis({ env: { REDIS_URL: "redis://example:6390" }, stateDir: stateDir() });
    expect(r).toMatchObject({ url: "redis://example:6390", source: "env" });
  });

  it("reuses a Redis that answers PING on the probed address", async () => {
    const r = await localRedis({
      env: { PATH: process.env.PATH },
      stateDir: stateDir(),
      probeUrl: TEST_REDIS_URL,
    });
    expect(r).toMatchObject({ url: TEST_REDIS_URL, source: "existing" });
    await r.stop();
    expect(await redisAnswers(TEST_REDIS_URL)).toBe(true); // not ours to stop
  });

  it("else starts redis-server from PATH with its data in the state folder, and stops it", async () => {
    expect(findOnPath("redis-server")).not.toBeNull();
    const dir = stateDir();
    const r = await localRedis({ env: { PATH: process.env.PATH }, stateDir: dir, probeUrl: nobodyListens });
    try {
      expect(r.source).toBe("started");
      expect(r.url).toMatch(/^redis:\/\/127\.0\.0\.1:\d+$/);
      expect(await redisAnswers(r.url)).toBe(true);
      expect(readdirSync(path.join(dir, "redis"))).toContain("redis.log");
    } finally {
      await r.stop();
    }
    expect(await redisAnswers(r.url, 500)).toBe(false);
    expect(existsSync(path.join(dir, "redis", "fleetq-dev-redis.json"))).toBe(false);
  });

  it("else exits with a message that says how to get one", async () => {
    const emptyPath = tempDir("fleetq-empty-path", "test");
    const attempt = localRedis({ env: { PATH: emptyPath }, stateDir: stateDir(), probeUrl: nobodyListens });
    await expect(attempt).rejects.toBeInstanceOf(CliError);
    await expect(attempt).rejects.toThrow(NO_REDIS_MESSAGE);
    expect(NO_REDIS_MESSAGE).toContain("apt-get install -y redis-server");
    expect(NO_REDIS_MESSAGE).toContain("REDIS_URL=redis://HOST:PORT npm start");
  });
});
