// Agent credentials are scoped in Redis: with the ACL fleetq prints for each cluster, agent A's
// user can consume its own bind queue but cannot enqueue onto, read or plant outcomes in B's.
// Runs its own redis-server: ACL changes never touch the shared one.
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  agentAclRules,
  agentOutcomePrefix,
  agentRedisUrl,
  agentRedisUser,
} from "../../src/protocol/agent-redis-acl.js";
import { BIND_QUEUE_PREFIX } from "../../src/protocol/bind-request.js";
import { OwnRedis } from "../helpers/topology/services.js";

let server: OwnRedis;
let url: string;
let admin: Redis;
const closers: (() => Promise<unknown>)[] = [];

const agentConnection = (cluster: string) => {
  const r = new Redis(agentRedisUrl(url, cluster, `pw-${cluster}`), { maxRetriesPerRequest: null });
  r.on("error", () => {}); // refusals are asserted on the commands; the server stops at the end
  closers.push(async () => r.disconnect());
  return r;
};

beforeAll(async () => {
  server = await OwnRedis.start();
  url = server.url;
  admin = new Redis(url, { maxRetriesPerRequest: null });
  admin.on("error", () => {});
  for (const cluster of ["a", "b"])
    await admin.call("ACL", "SETUSER", agentRedisUser(cluster), ...agentAclRules(cluster, `pw-${cluster}`));
});

afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => {});
  admin?.disconnect();
  await server?.stop();
});

describe("agent credentials scoped in Redis", () => {
  it("agent A consumes its own bind queue", async () => {
    const producer = new Queue("a", { connection: admin, prefix: BIND_QUEUE_PREFIX });
    closers.push(() => producer.close());
    await producer.add("bind", { hello: "a" }, { jobId: "r1" });
    const seen = await new Promise<unknown>((resolve, reject) => {
      const worker = new Worker("a", async (job) => resolve(job.data), {
        connection: agentConnection("a"),
        prefix: BIND_QUEUE_PREFIX,
      });
      worker.on("error", reject);
      closers.push(() => worker.close());
    });
    expect(seen).toEqual({ hello: "a" });
    const own = agentConnection("a");
    await own.set(`${agentOutcomePrefix("a")}:outcome:r1`, "{}");
  });

  it("agent A cannot enqueue onto B's queue", async () => {
    const forged = new Queue("b", { connection: agentConnection("a"), prefix: BIND_QUEUE_PREFIX });
    closers.push(() => forged.close());
    await expect(forged.add("bind", { forged: true }, { jobId: "evil" })).rejects.toThrow(
      /NOPERM|permission/i,
    );
    expect(await admin.exists("bind:b:evil")).toBe(0);
  });

  it("agent A cannot read B's queue or plant outcomes for B", async () => {
    const producer = new Queue("b", { connection: admin, prefix: BIND_QUEUE_PREFIX });
    closers.push(() => producer.close());
    await producer.add("bind", { secret: "b" }, { jobId: "r2" });
    const a = agentConnection("a");
    await expect(a.hgetall("bind:b:r2")).rejects.toThrow(/NOPERM/);
    await expect(a.lrange("bind:b:wait", 0, -1)).rejects.toThrow(/NOPERM/);
    await expect(a.set(`${agentOutcomePrefix("b")}:outcome:r2`, "{}")).rejects.toThrow(/NOPERM/);
    await expect(a.call("KEYS", "*")).rejects.toThrow(/NOPERM/);
    await expect(a.call("FLUSHALL")).rejects.toThrow(/NOPERM/);
  });

  it("agent A cannot consume B's queue", async () => {
    const thief = new Queue("b", { connection: agentConnection("a"), prefix: BIND_QUEUE_PREFIX });
    closers.push(() => thief.close());
    await expect(thief.getJobs(["wait"])).rejects.toThrow(/NOPERM/);
  });
});
