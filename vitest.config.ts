import { defineConfig } from "vitest/config";

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
  },
});
