// `fleetq agent --cluster NAME --backend kubernetes|simulated [--config FILE]`: one cluster's
// agent (src/agent). Token: --token-file, the config file's api.token/api.tokenFile, or
// FLEETQ_AGENT_TOKEN; API: FLEETQ_API_URL; Redis: --redis-url-file, FLEETQ_REDIS_URL (or
// REDIS_URL); probes:
// FLEETQ_AGENT_HEALTH_PORT (agent-health.ts).
import { readFileSync } from "node:fs";
import { AgentAuthError, ConfigFileError, loadAgentOptions, runAgent } from "../../agent/index.js";
import { CliError } from "../exit-codes.js";
import { Lifecycle } from "../lifecycle.js";
import { startAgentHealth } from "./agent-health.js";
import { createLogger, flushLogger } from "../logger.js";

export interface AgentFlags {
  cluster: string;
  backend: string;
  config?: string;
  clusterFile?: string;
  tokenFile?: string;
  redisUrlFile?: string;
  queuePrefix?: string;
}

export async function runAgentCommand(flags: AgentFlags): Promise<void> {
  if (flags.backend !== "kubernetes" && flags.backend !== "simulated") {
    throw new CliError(`--backend: "${flags.backend}" is not one of kubernetes, simulated`);
  }
  const env = { ...process.env };
  if (flags.tokenFile) env.FLEETQ_AGENT_TOKEN = readSecret(flags.tokenFile, "--token-file");
  if (flags.redisUrlFile) env.FLEETQ_REDIS_URL = readSecret(flags.redisUrlFile, "--redis-url-file");
  env.FLEETQ_REDIS_URL ??= process.env.REDIS_URL;
  const log = createLogger("fleetq-agent");
  let options: Awaited<ReturnType<typeof loadAgentOptions>>;
  try {
    options = await loadAgentOptions(
      {
        cluster: flags.cluster,
        backend: flags.backend,
        config: flags.config,
        clusterFile: flags.clusterFile,
      },
      env,
    );
  } catch (e) {
    if (e instanceof ConfigFileError) throw new CliError(e.message);
    throw e;
  }
  const healthPort = process.env.FLEETQ_AGENT_HEALTH_PORT;
  if (healthPort !== undefined && !/^\d+$/.test(healthPort))
    throw new CliError(`FLEETQ_AGENT_HEALTH_PORT: "${healthPort}" is not a port number`);
  const health = healthPort ? await startAgentHealth(Number(healthPort)) : null;
  const queuePrefix =
    flags.queuePrefix ?? options.queuePrefix ?? (process.env.FLEETQ_BIND_QUEUE_PREFIX || undefined);
  const agent = await runAgent({ ...options, queuePrefix, logger: log }).catch((e: unknown) => {
    throw e instanceof AgentAuthError ? new CliError(e.message) : e;
  });
  health?.ready(() => ({
    refusedRequests: agent.refusedRequests,
    ignoredPods: (agent.backend as { ignoredPods?: number }).ignoredPods ?? 0,
  }));
  const life = new Lifecycle(log);
  life.add({ name: `agent ${flags.cluster}`, stop: () => agent.stop() });
  if (health) life.add({ name: "agent probes", stop: () => health.close() });
  await life.untilSignal();
  await flushLogger(log);
  // Stopped cleanly; a library\'s leftover timer must not keep the process alive.
  process.exit(0);
}

/** A secret kept in a file (a mounted secret, a file another service wrote), trimmed. */
function readSecret(file: string, option: string): string {
  try {
    const secret = readFileSync(file, "utf8").trim();
    if (!secret) throw new CliError(`${option} ${file} is empty`);
    return secret;
  } catch (e) {
    if (e instanceof CliError) throw e;
    throw new CliError(`${option}: cannot read ${file}: ${(e as Error).message}`);
  }
}
