// `fleetq agent-acl <cluster>`: the Redis ACL user of a cluster's agent, limited to that
// cluster's keys. Prints the ACL SETUSER command (for redis-cli or a Redis config), or with
// --apply runs it on REDIS_URL and prints the URL the agent connects with.
import { randomBytes } from "node:crypto";
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
}

export function registerAgentAcl(program: Command): void {
  program
    .command("agent-acl")
    .description("the Redis ACL user of a cluster's agent: only its own bind queue and outcome keys")
    .argument("<cluster>", "the cluster")
    .option("--password <password>", "the user's password (default: a new random one)")
    .option("--apply", "run ACL SETUSER on the Redis server and print the agent's REDIS_URL")
    .option("--redis-url <url>", "with --apply: the server, as an admin user (default REDIS_URL)")
    .option(
      "--queue-prefix <prefix>",
      "key prefix of the bind queues (default FLEETQ_BIND_QUEUE_PREFIX, else bind)",
    )
    .action(
      action(async (cluster: string, opts: AclOptions) => {
        if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(cluster))
          throw new CliError(`"${cluster}" is not a cluster name`);
        const password = opts.password ?? randomBytes(24).toString("base64url");
        const prefix = opts.queuePrefix ?? process.env.FLEETQ_BIND_QUEUE_PREFIX ?? undefined;
        if (!opts.apply) {
          print(agentAclCommand(cluster, password, prefix));
          return EXIT.OK;
        }
        const url = opts.redisUrl ?? process.env.REDIS_URL;
        if (!url) throw new CliError("--apply needs --redis-url or REDIS_URL");
        const { Redis } = await import("ioredis");
        const redis = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
        try {
          await redis.connect();
          await redis.call(
            "ACL",
            "SETUSER",
            agentRedisUser(cluster),
            ...agentAclRules(cluster, password, prefix),
          );
        } catch (e) {
          throw new CliError(`cannot set the ACL user on ${new URL(url).host}: ${(e as Error).message}`);
        } finally {
          redis.disconnect();
        }
        print(agentRedisUrl(url, cluster, password));
        printErr(
          `Redis user ${agentRedisUser(cluster)} set; give the agent of ${cluster} the REDIS_URL above (shown once)`,
        );
        return EXIT.OK;
      }),
    );
}
