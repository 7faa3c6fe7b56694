import os from "node:os";
import { defineConfig } from "vitest/config";
import SystemsFirst from "./test/helpers/sequencer.js";

export default defineConfig({
  resolve: {
    // Two copies of graphql (ESM and CJS) break instanceof checks under vitest.
    alias: [{ find: /^graphql$/, replacement: "graphql/index.js" }],
  },
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/helpers/template-db.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Test files share a process's loaded modules: importing the API, the store and the core
    // again for each file cost more than most files' tests. Each file still opens its own
    // database, Redis prefix and servers.
    isolate: false,
    // Most files wait (on PostgreSQL, Redis, processes they start) more than they compute: with
    // one more file than there are cores, the cores still idled an eighth of the run; two more
    // keep them busy.
    maxWorkers: os.availableParallelism() + 2,
    sequence: { sequencer: SystemsFirst },
  },
});
