#!/usr/bin/env node
// The `fleetq` command (package.json "bin"): the compiled CLI, bundled in dist/cli/ (`npm run
// build`, run by `npm install`).
try {
  await import("../dist/cli/main.js");
} catch (e) {
  if (e?.code === "ERR_MODULE_NOT_FOUND" && String(e.message).includes("dist/cli/main.js")) {
    console.error("fleetq: not built yet: run `npm run build` (npm install does it)");
    process.exit(3);
  }
  throw e;
}
