#!/usr/bin/env node
// `npm run build` (also run by `npm install` and before `npm test`): compiles the TypeScript
// sources (src/, workers/, the Prisma client generated into src/store/generated/) to dist/ with
// tsc, then copies what the compiled code reads beside itself: schema.graphql and the dashboard's
// files, with the dashboard's scripts bundled (graphql-ws included) so the server needs no bundler.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";

const root = path.resolve(import.meta.dirname, "..");
const dist = path.join(root, "dist");
const require = createRequire(import.meta.url);

if (!existsSync(path.join(root, "src/store/generated/prisma/client.ts"))) {
  console.error("build: the Prisma client is not generated yet: run `npm run db:generate` first");
  process.exit(1);
}

rmSync(dist, { recursive: true, force: true });
const tsc = path.join(path.dirname(require.resolve("typescript/package.json")), "bin", "tsc");
try {
  execFileSync(process.execPath, [tsc, "-p", path.join(root, "tsconfig.build.json")], { stdio: "inherit" });
} catch {
  console.error("build: tsc failed");
  process.exit(1);
}

cpSync(path.join(root, "schema.graphql"), path.join(dist, "schema.graphql"));
const publicDir = path.join(root, "src/dashboard/public");
const distPublic = path.join(dist, "src/dashboard/public");
cpSync(publicDir, distPublic, { recursive: true });

// The dashboard's scripts as one file, bundled by the same code that bundles them on demand when
// the server runs from the sources.
const { dashboardBundle } = await import(pathToFileURL(path.join(dist, "src/dashboard/mount-dashboard.js")).href);
writeFileSync(path.join(distPublic, "app.bundle.js"), await dashboardBundle());
