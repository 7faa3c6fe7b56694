// `fleetq agent-acl <cluster...>`: the Redis ACL user of each cluster's agent, limited to that
// cluster's keys. Prints the ACL SETUSER commands (for redis-cli or a Redis config), or with
// --apply runs them on REDIS_URL and prints the URL each agent connects with — or, with
// --url-dir, writes it to <dir>/redis-agent-<cluster>.url for the agent's --redis-url-file.
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import {
  agentAclCommand,
  agentAclRules,
  agentRedisUrl,
  agentRedisUser,
} from "../../protocol/agent-redis-acl.js";
import { action, print, printErr } from "../command-context.js";
import { CliError, EXIT } from "../exit-codes.js";

interface AclOptions {
  password?: string;
  apply?: boolean;
  redisUrl?: string;
  queuePrefix?: string;
  urlDir?: string;
}

/** The file `--url-dir` writes a cluster's agent URL to (an agent's `--redis-url-file`). */
export const agentRedisUrlFile = (dir: string, cluster: string): string =>
  path.join(dir, `redis-agent-${cluster}.url`);

export function registerAgentAcl(program: Command): void {
  program
    .command("agent-acl")
    .description("the Redis ACL user of each cluster's agent: only its own bind queue and outcome keys")
    .argument("<clusters...>", "the clusters")
    .option("--password <password>", "the user's password (default: a new random one per cluster)")
    .option("--apply", "run ACL SETUSER on the Redis server and print the agent's REDIS_URL")
    .option("--redis-url <url>", "with --apply: the server, as an admin user (default REDIS_URL)")
    .option(
      "--url-dir <dir>",
      "with --apply: write each agent's Redis URL to <dir>/redis-agent-<cluster>.url",
    )
    .option(
      "--queue-prefix <prefix>",
      "key prefix of the bind queues (default FLEETQ_BIND_QUEUE_PREFIX, else bind)",
    )
    .action(
      action(async (clusters: string[], opts: AclOptions) => {
        for (const cluster of clusters)
          if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(cluster))
            throw new CliError(`"${cluster}" is not a cluster name`);
        if (opts.urlDir && !opts.apply) throw new CliError("--url-dir needs --apply");
        const password = (): string => opts.password ?? randomBytes(24).toString("base64url");
        const prefix = opts.queuePrefix ?? process.env.FLEETQ_BIND_QUEUE_PREFIX ?? undefined;
        if (!opts.apply) {
          for (const cluster of clusters) print(agentAclCommand(cluster, password(), prefix));
          return EXIT.OK;
        }
        const url = opts.redisUrl ?? process.env.REDIS_URL;
        if (!url) throw new CliError("--apply needs --redis-url or REDIS_URL");
        const { Redis } = await import("ioredis");
        const redis = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
        try {
          await redis.connect();
          for (const cluster of clusters) {
            const secret = password();
            await redis.call(
              "ACL",
              "SETUSER",
              agentRedisUser(cluster),
              ...agentAclRules(cluster, secret, prefix),
            );
            const agentUrl = agentRedisUrl(url, cluster, secret);
            if (opts.urlDir) {
              const file = agentRedisUrlFile(opts.urlDir, cluster);
              writeFileSync(file, `${agentUrl}\n`, { mode: 0o600 });
              printErr(`Redis user ${agentRedisUser(cluster)} set; its URL is in ${file}`);
            } else {
              print(agentUrl);
              printErr(
                `Redis user ${agentRedisUser(cluster)} set; give the agent of ${cluster} the REDIS_URL above (shown once)`,
              );
            }
          }
        } catch (e) {
          if (e instanceof CliError) throw e;
          throw new CliError(`cannot set the ACL users on ${new URL(url).host}: ${(e as Error).message}`);
        } finally {
          redis.disconnect();
        }
        return EXIT.OK;
      }),
    );
}
