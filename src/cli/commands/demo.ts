// `fleetq demo`: creates the demo deployment (queues, quotas, clusters, tokens) through the API
// with an ADMIN token, once — what `fleetq dev` does for itself; docker compose runs it before
// starting the agents, which read their tokens from --tokens-dir.
import type { Command } from "commander";
import { action, apiClientOf, print } from "../command-context.js";
import { DEMO_CLUSTER_FILES } from "../demo/demo-plan.js";
import { TokenFiles } from "../demo/token-files.js";
import { exampleClusterFile } from "../paths.js";

export function registerDemo(program: Command): void {
  program
    .command("demo")
    .description("create the demo queues, quotas, clusters and tokens (ADMIN token; idempotent)")
    .requiredOption("--tokens-dir <dir>", "where the member and agent tokens are written (<name>.token)")
    .action(
      action(async (opts: { tokensDir: string }, cmd: Command) => {
        const { loadClusterFile } = await import("../../agent/backends/simulated/cluster-file.js");
        const { seedDemo } = await import("../demo/seed-demo.js");
        const clusters = await Promise.all(
          DEMO_CLUSTER_FILES.map(async (f) => {
            const parsed = await loadClusterFile(exampleClusterFile(f));
            return { name: parsed.name ?? f.replace(/\.ya?ml$/, ""), labels: parsed.labels };
          }),
        );
        const files = new TokenFiles(opts.tokensDir);
        const r = await seedDemo(apiClientOf(cmd), clusters, files);
        print(
          `demo ready: ${r.createdQueues.length} queue(s), ${r.registeredClusters.length} cluster(s) and ` +
            `${r.createdTokens.length} token(s) created; tokens in ${opts.tokensDir}`,
        );
        // The demo's way in for people (docker compose logs demo); agents read their files.
        for (const [name, secret] of Object.entries(r.tokens.members))
          print(`member token (${name}): ${secret}`);
      }),
    );
}
