// Secrets in logs: a Redis or database URL's password never reaches a log line, whether the URL is
// a field, nested, inside an error or in the message (fleetq dev logs the Redis it uses).
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { createLogger, flushLogger } from "../../src/cli/logger.js";
import { redactUrl } from "../../src/cli/redact.js";
import { tempDir } from "../helpers/temp-dir.js";

const SECRET = "s3cr3t-pass-word";

describe("logs redact secrets", () => {
  it("replaces URL passwords and secret fields in every part of a log line", async () => {
    const file = path.join(tempDir("fleetq-log"), "log.jsonl");
    const log = createLogger("fleetq-test", file);
    log.info({ redis: `redis://:${SECRET}@127.0.0.1:6380/0`, source: "env" }, "redis");
    log.info({ part: { database: `postgresql://fleetq:${SECRET}@db:5432/fleetq` } }, "database");
    log.warn({ err: new Error(`cannot reach rediss://fleetq-agent-c1:${SECRET}@redis:6380`) }, "redis down");
    log.info(`connecting to redis://default:${SECRET}@redis:6379`);
    log.info({ token: SECRET, headers: { authorization: `Bearer ${SECRET}` } }, "request");
    // The file opens asynchronously: wait for all five lines.
    const text = await vi.waitFor(async () => {
      await flushLogger(log);
      const t = readFileSync(file, "utf8");
      if (t.trim().split("\n").length < 5) throw new Error("not yet written");
      return t;
    });
    expect(text).not.toContain(SECRET);
    const lines = text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines[0].redis).toBe("redis://:***@127.0.0.1:6380/0");
    expect(lines[1].part.database).toBe("postgresql://fleetq:***@db:5432/fleetq");
    expect(lines[2].err.message).toBe("cannot reach rediss://fleetq-agent-c1:***@redis:6380");
    expect(lines[3].msg).toBe("connecting to redis://default:***@redis:6379");
    expect(lines[4].token).toBe("***");
  });

  it("leaves URLs without a password as they are", () => {
    expect(redactUrl("redis://127.0.0.1:6379")).toBe("redis://127.0.0.1:6379");
    expect(redactUrl(`redis://u:${SECRET}@h:1`)).toBe("redis://u:***@h:1");
  });
});
