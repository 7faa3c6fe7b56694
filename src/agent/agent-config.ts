// `fleetq agent --cluster NAME --backend kubernetes|simulated [--config FILE]`: turns the
// command line, an optional YAML config file and the environment into AgentOptions.
// Precedence: command line, then the file, then the environment, then defaults.
import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { z } from "zod";
import type { AgentOptions } from "./agent.js";
import type { BackendConfig } from "./backends/create-backend.js";
import { ConfigFileError, readYamlFile } from "./yaml-file.js";

export interface AgentCommandArgs {
  cluster: string;
  backend: "kubernetes" | "simulated";
  /** YAML config file (see agentConfigSchema). */
  config?: string;
  /** Simulated backend: the cluster file (overrides the config file's). */
  clusterFile?: string;
}

export const DEFAULT_API_URL = "http://127.0.0.1:4000/graphql";
export const DEFAULT_REDIS_URL = "redis://127.0.0.1:6379";

const agentConfigSchema = z
  .object({
    api: z
      .object({
        url: z.url().optional(),
        token: z.string().min(1).optional(),
        /** A file holding the token (e.g. a mounted Kubernetes secret). */
        tokenFile: z.string().min(1).optional(),
      })
      .strict()
      .default({}),
    redis: z
      .object({ url: z.string().min(1).optional() })
      .strict()
      .default({}),
    queuePrefix: z.string().min(1).optional(),
    concurrency: z.number().int().positive().optional(),
    heartbeatSeconds: z.number().positive().optional(),
    labels: z.record(z.string(), z.string()).optional(),
    kubernetes: z
      .object({
        kubeconfig: z.string().min(1).optional(),
        context: z.string().min(1).optional(),
        defaultNamespace: z.string().min(1).optional(),
        /** Finished pods fleetq created are deleted this long after they ended (0 = kept). */
        finishedPodTtlSeconds: z.number().min(0, "finishedPodTtlSeconds must not be negative").optional(),
        /** Once, when upgrading from an agent without seals: the running pods of fleetq jobs found
         * at start are taken as this agent's and sealed. Remove it after that start. */
        adoptUnsealedPods: z.boolean().optional(),
      })
      .strict()
      .default({}),
    simulated: z
      .object({
        clusterFile: z.string().min(1).optional(),
        /** Keeps the simulated cluster's pods across agent restarts, like a real cluster. */
        stateFile: z.string().min(1).optional(),
      })
      .strict()
      .default({}),
  })
  .strict();

export type AgentConfigFile = z.output<typeof agentConfigSchema>;

export async function loadAgentOptions(
  args: AgentCommandArgs,
  env: NodeJS.ProcessEnv = process.env,
): Promise<AgentOptions> {
  const file: AgentConfigFile = args.config
    ? await readYamlFile(args.config, agentConfigSchema)
    : agentConfigSchema.parse({});
  // Paths in the file are relative to the file.
  const fromFile = (path: string | undefined) =>
    path && args.config ? resolve(dirname(args.config), path) : path;
  const where = args.config ?? "agent configuration";

  let token = file.api.token;
  const tokenFile = fromFile(file.api.tokenFile);
  if (!token && tokenFile) {
    try {
      token = (await readFile(tokenFile, "utf8")).trim();
    } catch (err) {
      throw new ConfigFileError(
        where,
        "api.tokenFile",
        `cannot read ${tokenFile}: ${(err as Error).message}`,
      );
    }
  }
  token ??= env.FLEETQ_AGENT_TOKEN ?? env.FLEETQ_TOKEN;
  if (!token) {
    throw new ConfigFileError(
      where,
      "api.token",
      "no agent token: set api.token or api.tokenFile, or FLEETQ_AGENT_TOKEN",
    );
  }

  let backend: BackendConfig;
  if (args.backend === "simulated") {
    const clusterFile = args.clusterFile ?? fromFile(file.simulated.clusterFile) ?? env.FLEETQ_CLUSTER_FILE;
    if (!clusterFile) {
      throw new ConfigFileError(where, "simulated.clusterFile", "the simulated backend needs a cluster file");
    }
    const stateFile = fromFile(file.simulated.stateFile) ?? (env.FLEETQ_SIMULATED_STATE_FILE || undefined);
    backend = { kind: "simulated", clusterFile, ...(stateFile ? { stateFile } : {}) };
  } else {
    backend = { kind: "kubernetes", ...file.kubernetes, kubeconfig: fromFile(file.kubernetes.kubeconfig) };
  }

  return {
    cluster: args.cluster,
    apiUrl: file.api.url ?? env.FLEETQ_API_URL ?? DEFAULT_API_URL,
    token,
    redis: file.redis.url ?? env.FLEETQ_REDIS_URL ?? DEFAULT_REDIS_URL,
    queuePrefix: file.queuePrefix,
    backend,
    labels: file.labels,
    concurrency: file.concurrency,
    heartbeatSeconds: file.heartbeatSeconds,
  };
}
