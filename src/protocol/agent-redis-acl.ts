// Each cluster's agent gets its own Redis user that reaches only its cluster's keys: its bind
// queue (BullMQ, `bind:<cluster>:*`) and its outcome store (`bind-agent:<cluster>:*`). The
// control plane keeps the default user. A compromised agent then cannot put a forged request
// on another cluster's queue, read it, or plant outcomes there: Redis refuses with NOPERM,
// whatever the agent's code does (Lua scripts included: Redis checks the keys they touch).
import { BIND_QUEUE_PREFIX, bindQueueName } from "./bind-request.js";

/** Where a cluster's agents record what they executed (outside BullMQ's key space). */
export function agentOutcomePrefix(cluster: string, queuePrefix: string = BIND_QUEUE_PREFIX): string {
  return `${queuePrefix}-agent:${cluster}`;
}

export const agentRedisUser = (cluster: string): string => `fleetq-agent-${cluster}`;

/** The key patterns an agent of `cluster` may touch. */
export function agentKeyPatterns(cluster: string, queuePrefix: string = BIND_QUEUE_PREFIX): string[] {
  return [`${queuePrefix}:${bindQueueName(cluster)}:*`, `${agentOutcomePrefix(cluster, queuePrefix)}:*`];
}

/**
 * The rules of `ACL SETUSER <user> ...` for a cluster's agent. Commands: everything BullMQ's
 * worker and the outcome store use (keyed reads and writes, blocking pops, Lua scripts), but
 * none of the dangerous or administrative ones (FLUSHALL, CONFIG, KEYS, DEBUG…), except INFO,
 * which BullMQ reads for the server's version. No Pub/Sub channels.
 */
export function agentAclRules(
  cluster: string,
  password: string,
  queuePrefix: string = BIND_QUEUE_PREFIX,
): string[] {
  return [
    "reset",
    "on",
    `>${password}`,
    "resetchannels",
    ...agentKeyPatterns(cluster, queuePrefix).map((p) => `~${p}`),
    "+@all",
    "-@dangerous",
    "-@admin",
    "+info",
    "+client|setname",
    "+client|getname",
    "+client|id",
  ];
}

/** The command as redis-cli takes it (the password quoted). */
export function agentAclCommand(cluster: string, password: string, queuePrefix?: string): string {
  const rules = agentAclRules(cluster, password, queuePrefix).map((r) => (r.startsWith(">") ? `'${r}'` : r));
  return `ACL SETUSER ${agentRedisUser(cluster)} ${rules.join(" ")}`;
}

/** The Redis URL an agent connects with: the control plane's server, the agent's user. */
export function agentRedisUrl(serverUrl: string, cluster: string, password: string): string {
  const u = new URL(serverUrl);
  u.username = agentRedisUser(cluster);
  u.password = password;
  return u.toString();
}
