// `fleetq serve` and `fleetq worker` refuse a Redis that anyone reaching it may use: whoever
// writes to Redis can put requests on the agents' queues. The probe connects as the URL says but
// without its user and password; a PONG means the server is open.
import net from "node:net";
import tls from "node:tls";
import type { Logger } from "pino";
import { CliError } from "../exit-codes.js";
import { redactUrl } from "../redact.js";

export type RedisAccess = "open" | "protected" | "unreachable";

/** What a connection without credentials gets from the Redis of `url`; never throws. A plain
 * PING on a socket of its own: a client library would authenticate or negotiate first. */
export function probeRedis(url: string, timeoutMs = 3000): Promise<RedisAccess> {
  const u = new URL(url);
  const host = u.hostname.replace(/^\[|\]$/g, "");
  const port = Number(u.port || 6379);
  return new Promise((resolve) => {
    const socket =
      u.protocol === "rediss:" ? tls.connect({ host, port, servername: host }) : net.connect({ host, port });
    let reply = "";
    const done = (access: RedisAccess) => {
      socket.destroy();
      resolve(access);
    };
    socket.setTimeout(timeoutMs, () => done("unreachable"));
    socket.on("error", () => done("unreachable"));
    socket.on(u.protocol === "rediss:" ? "secureConnect" : "connect", () => socket.write("PING\r\n"));
    socket.on("data", (chunk: Buffer) => {
      reply += chunk.toString("latin1");
      if (!reply.includes("\r\n")) return;
      if (reply.startsWith("+PONG")) done("open");
      else if (/^-(NOAUTH|NOPERM|WRONGPASS)/.test(reply)) done("protected");
      else done("unreachable");
    });
  });
}

/** Whether the operator allowed an open Redis: --insecure-redis or FLEETQ_INSECURE_REDIS=1. */
export function insecureRedisAllowed(flag: boolean | undefined, env = process.env): boolean {
  return Boolean(flag) || env.FLEETQ_INSECURE_REDIS === "1" || env.FLEETQ_INSECURE_REDIS === "true";
}

/** Throws when the Redis is open and that was not allowed; says so in the log when it was. */
export async function refuseOpenRedis(url: string, allowOpen: boolean, log: Logger): Promise<void> {
  const access = await probeRedis(url);
  if (access === "unreachable") {
    log.warn({ redis: redactUrl(url) }, "redis does not answer yet; its access was not checked");
    return;
  }
  if (access === "protected") return;
  if (allowOpen) {
    log.warn({ redis: redactUrl(url) }, "redis accepts connections without a password (--insecure-redis)");
    return;
  }
  throw new CliError(
    `Redis at ${redactUrl(url)} accepts connections without a password: anyone who reaches it could ` +
      "put requests on the agents' queues. Require a password (requirepass, or an ACL default user) " +
      "and put it in REDIS_URL, or pass --insecure-redis (FLEETQ_INSECURE_REDIS=1) on a local test setup",
  );
}

/** Signs BindRequests when the operator runs on an open Redis and set no secret: public, so it
 * protects nothing — as nothing can on a Redis anyone may write to. */
const INSECURE_BIND_SECRET = "fleetq-insecure-redis-public-bind-secret";

/** The secret serve and worker sign BindRequests with (they must share it): FLEETQ_BIND_SECRET;
 * without it only on an allowed open Redis, with a public one (said in the log). */
export function bindSecretOf(allowOpen: boolean, log: Logger, env = process.env): string {
  const secret = env.FLEETQ_BIND_SECRET;
  if (secret) {
    if (secret.length < 16)
      throw new CliError("FLEETQ_BIND_SECRET: at least 16 characters (openssl rand -hex 32)");
    return secret;
  }
  if (allowOpen) {
    log.warn("FLEETQ_BIND_SECRET is not set: bind requests are signed with a public key (--insecure-redis)");
    return INSECURE_BIND_SECRET;
  }
  throw new CliError(
    "FLEETQ_BIND_SECRET is not set: fleetq serve and fleetq worker sign the agents' bind requests " +
      "with it. Give both the same secret of your own (openssl rand -hex 32)",
  );
}
