// The commands that run the control plane: dev, serve, migrate, worker, agent. Their implementations
// (src/cli/servers/) load the database, BullMQ and Kubernetes clients: imported only when run,
// so that everyday commands (submit, get, …) start fast.
import type { Command } from "commander";
import { action } from "../command-context.js";

export function registerServers(program: Command): void {
  program
    .command("dev")
    .description("run everything in one process: API, workers, three simulated clusters, a demo (npm start)")
    .option("-p, --port <port>", "API port (default FLEETQ_PORT, else 4000; 0 = any free port)")
    .option("--host <host>", "listen address (default FLEETQ_HOST, else all)")
    .option("--log-file <file>", "JSON logs go here (default <state folder>/dev.log; - = standard output)")
    .action(action(async (opts) => (await import("../servers/dev.js")).runDev(opts)));

  program
    .command("serve")
    .description("run the API server (GraphQL, dashboard, metrics, health)")
    .option("-p, --port <port>", "listen port (default FLEETQ_PORT, else 4000; 0 = any free port)")
    .option("--host <host>", "listen address (default FLEETQ_HOST, else all)")
    .option("--migrate", "apply database migrations before starting")
    .option(
      "--insecure-redis",
      "start even if Redis accepts connections without a password (FLEETQ_INSECURE_REDIS=1)",
    )
    .action(action(async (opts) => (await import("../servers/serve.js")).runServe(opts)));

  program
    .command("migrate")
    .description("apply the database migrations to DATABASE_URL (creates the database if missing)")
    .action(action(async () => (await import("../servers/migrate.js")).runMigrate()));

  program
    .command("worker")
    .description("run the scheduling workers (cycles per cluster, admission, outbox, usage)")
    .option(
      "--metrics-port <port>",
      "port of /metrics and /healthz (default FLEETQ_WORKER_PORT, else 9464; 0 = any)",
    )
    .option(
      "--insecure-redis",
      "start even if Redis accepts connections without a password (FLEETQ_INSECURE_REDIS=1)",
    )
    .action(action(async (opts) => (await import("../servers/worker.js")).runWorker(opts)));

  program
    .command("agent")
    .description("run a cluster's agent: carries out its BindRequests and reports the cluster")
    .requiredOption("--cluster <name>", "the cluster this agent speaks for")
    .requiredOption("--backend <backend>", "kubernetes or simulated")
    .option("--config <file>", "agent config file (YAML; see the README's Agents section)")
    .option(
      "--cluster-file <file>",
      "simulated backend: the cluster file (e.g. examples/clusters/a100-small.yaml)",
    )
    .option("--token-file <file>", "a file holding the AGENT token (e.g. a mounted secret)")
    .option(
      "--redis-url-file <file>",
      "a file holding the Redis URL (e.g. the agent's own Redis user, from `fleetq agent-acl --url-dir`)",
    )
    .option(
      "--queue-prefix <prefix>",
      "key prefix of the bind queues (default FLEETQ_BIND_QUEUE_PREFIX, else bind)",
    )
    .action(action(async (flags) => (await import("../servers/agent.js")).runAgentCommand(flags)));
}
