// What `fleetq dev` prints once everything runs: where things are, the tokens, and commands to
// copy and paste.
import { isAbsolute, relative } from "node:path";
import { redact } from "../database-admin.js";
import { DEMO_MEMBERS } from "../demo/demo-plan.js";
import type { RunningDev } from "./start-dev.js";

export function devBanner(dev: RunningDev, logFile: string | null): string {
  // Paths inside the working directory read best relative; others stay absolute.
  const rel = (p: string) => {
    const r = relative(process.cwd(), p);
    return r.startsWith("..") || isAbsolute(r) ? p : r || ".";
  };
  const database = dev.databaseUrl.startsWith("pglite:")
    ? `embedded PGlite in ${rel(dev.databaseUrl.slice("pglite:".length))} (set DATABASE_URL to use PostgreSQL)`
    : redact(dev.databaseUrl);
  const redis =
    dev.redis.source === "started"
      ? `${dev.redis.url} (redis-server started by fleetq, data in ${rel(dev.stateDir)}/redis)`
      : `${dev.redis.url}${dev.redis.source === "env" ? " (REDIS_URL)" : " (already running)"}`;
  const [memberName, memberSecret] = Object.entries(dev.tokens.members)[0] ?? ["", ""];
  const scope = (DEMO_MEMBERS[memberName] ?? []).join(", ");
  const base = dev.baseUrl;
  const cluster = (c: RunningDev["clusters"][number]) => `${c.name} (${c.nodes} nodes, ${c.gpus} GPUs)`;
  return [
    "",
    "fleetq dev: the whole control plane runs in this process. Ctrl-C stops it.",
    "",
    `  Dashboard  ${base}/#token=${dev.tokens.viewer}   (read-only; sign in with the admin token to act)`,
    `  API        ${base}/graphql   (subscriptions: ${base.replace(/^http/, "ws")}/graphql)`,
    `  Metrics    ${base}/metrics   Health: ${base}/healthz ${base}/readyz`,
    `  Database   ${database}`,
    `  Redis      ${redis}`,
    `  Clusters   ${dev.clusters.map(cluster).join(", ")}  (simulated)`,
    "  Queues     acme → research → vision, llm;  acme → product → search, ads",
    `  Logs       ${logFile ? `${rel(logFile)} (JSON lines)` : "standard output (JSON lines)"}`,
    "",
    `Tokens (saved in ${rel(dev.stateDir)}/tokens/):`,
    `  admin   ${dev.adminToken}`,
    `  member  ${memberSecret}   (${memberName}: may submit to ${scope} and the queues below)`,
    `  viewer  ${dev.tokens.viewer}   (reads only: the dashboard link's)`,
    "",
    "Try it in another terminal:",
    `  export FLEETQ_URL=${base} FLEETQ_TOKEN=${memberSecret}`,
    "  npx fleetq submit examples/jobs/llm-finetune.yaml --wait",
    "  npx fleetq submit examples/jobs/batch-etl.yaml --cluster cpu-heavy",
    "  npx fleetq get jobs",
    "  npx fleetq fairshare",
    "  npx fleetq why <job id>",
    `  FLEETQ_TOKEN=${dev.adminToken} npx fleetq queue set-quota vision --resource gpu --deserved 12`,
    "",
  ].join("\n");
}
