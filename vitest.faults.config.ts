// `npm run test:faults`: each fault injected in turn into the deployed topology under load
// (test/faults/, minutes of processes on their own PostgreSQL and Redis); not part of `npm test`.
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { alias: [{ find: /^graphql$/, replacement: "graphql/index.js" }] },
  test: {
    include: ["test/faults/**/*.test.ts"],
    testTimeout: 900_000,
    hookTimeout: 900_000,
    pool: "forks",
  },
});
