#!/usr/bin/env node
// `npm run build` (also run by `npm install` and before `npm test`): compiles the TypeScript
// sources (src/, workers/, the Prisma client generated into src/store/generated/) to dist/ with
// tsc, then copies what the compiled code reads beside itself: schema.graphql and the dashboard's
// files, with the dashboard's scripts bundled (graphql-ws included) so the server needs no bundler.
// Last, the compiled CLI is bundled into dist/cli/ (what bin/fleetq.mjs runs): one file to load
// instead of hundreds starts `fleetq` much faster (`bench:cli`); the commands' lazy imports stay
// separate chunks, and every package but the few the everyday commands need stays in node_modules.
// The client package's `fleetq` (packages/cli) is bundled from the same compiled code.
// `fleetq simulate`'s code is bundled once more on its own, with V8's compiled code for it.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
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

/** Packages bundled into the CLI (small, pure JavaScript, needed by everyday commands). */
const BUNDLED = new Set(["commander", "zod", "yaml"]);
const packageOf = (spec) => spec.split("/").slice(0, spec.startsWith("@") ? 2 : 1).join("/");
const { build } = await import("esbuild");
const packagesStayInNodeModules = {
  name: "packages-stay-in-node-modules",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (a) => (BUNDLED.has(packageOf(a.path)) ? undefined : { external: true }));
  },
};
// zod's `locales` namespace holds every language's messages; fleetq's are English only, and the
// other ~40 locales would be most of what the commands that check input with zod load.
const zodEnglishOnly = {
  name: "zod-english-only",
  setup(b) {
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (a) =>
      a.importer.includes(`${path.sep}zod${path.sep}`)
        ? { path: path.join(path.dirname(a.importer), a.path), namespace: "zod-locales" }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "zod-locales" }, (a) => ({
      contents: `export { default as en } from ${JSON.stringify(path.join(path.dirname(a.path), "en.js"))};`,
      resolveDir: path.dirname(a.path),
    }));
  },
};
const plugins = [packagesStayInNodeModules, zodEnglishOnly];
/** The CLI as ES modules: one file to start from, the lazily imported parts in chunks of their own. */
const esmBundle = {
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  minifyWhitespace: true,
  minifySyntax: true,
  // the bundled CommonJS packages (commander) require Node's built-ins
  banner: {
    js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);',
  },
  logLevel: "warning",
};
await build({
  ...esmBundle,
  entryPoints: { main: path.join(dist, "src/cli/main.js") },
  outdir: path.join(dist, "cli"),
  plugins,
});

// The client package (packages/cli): the commands run against an API, every package they use
// bundled in (ws's optional native speed-ups aside), so that it installs from its tarball with no
// dependencies; no database, Redis, server or scheduling code (test/deploy/cli-package.test.ts).
// src/cli/lazy.js requires its packages by a name known when run: in the client package, a require
// of each by its literal name stands in for it, which the bundler follows.
const { LAZY_PACKAGES } = await import(pathToFileURL(path.join(dist, "src/cli/lazy.js")).href);
const lazyModules = LAZY_PACKAGES.map((p) => `${JSON.stringify(p)}: () => require(${JSON.stringify(p)})`);
const lazyPackagesBundled = {
  name: "lazy-packages-bundled",
  setup(b) {
    b.onLoad({ filter: /[/\\]src[/\\]cli[/\\]lazy\.js$/ }, () => ({
      contents:
        `const modules = { ${lazyModules.join(", ")} };\n` +
        "export function lazyRequire(name) { let loaded; return () => (loaded ??= modules[name]()); }",
      resolveDir: path.join(dist, "src/cli"),
    }));
  },
};
const clientDist = path.join(root, "packages", "cli", "dist");
rmSync(clientDist, { recursive: true, force: true });
await build({
  ...esmBundle,
  entryPoints: { fleetq: path.join(dist, "src/cli/client-main.js") },
  outdir: clientDist,
  external: ["bufferutil", "utf-8-validate"],
  plugins: [zodEnglishOnly, lazyPackagesBundled],
});

// `fleetq simulate`'s code (the scenario reader, the scheduling core, the YAML parser) once more as
// one CommonJS file, run with V8's code cache for it (src/cli/cached-bundle.ts): the cache is
// written after running the bundle on sample scenarios, so what a run compiles is compiled already.
// A Node.js other than this one refuses the cache and compiles the bundle as usual.
const simulateBundle = path.join(dist, "cli", "simulate.cjs");
await build({
  entryPoints: [path.join(dist, "src/simulate/command.js")],
  outfile: simulateBundle,
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  minifyWhitespace: true,
  minifySyntax: true,
  define: { "import.meta.url": "__importMetaUrl" },
  banner: { js: 'const __importMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
  logLevel: "warning",
  plugins,
});
const { writeBundleCache } = await import(pathToFileURL(path.join(dist, "src/cli/cached-bundle.js")).href);
const samples = mkdtempSync(path.join(tmpdir(), "fleetq-build-"));
try {
  const one = (gpus) => ({
    name: "one node",
    actions: ["allocate"],
    nodes: { node0: { gpus } },
    queues: [{ name: "q", deserved: { gpu: -1 } }],
    jobs: [{ name: "j", queue: "q", priority: 50, perTask: { gpus: 1 }, tasks: [{ state: "Pending" }] }],
    expect: { tasks: { "j-0": { status: gpus ? "Binding" : "Pending" } } },
  });
  writeFileSync(path.join(samples, "one.json"), JSON.stringify(one(1)));
  writeFileSync(
    path.join(samples, "one.yaml"),
    "name: one node\nactions: [allocate]\nnodes: { node0: { gpus: 1 } }\nqueues: [{ name: q, deserved: { gpu: -1 } }]\n" +
      "jobs: [{ name: j, queue: q, priority: 50, perTask: { gpus: 1 }, tasks: [{ state: Pending }] }]\n",
  );
  writeFileSync(path.join(samples, "full.json"), JSON.stringify(one(0)));
  const ignore = () => {};
  await writeBundleCache(simulateBundle, async (m) => {
    await m.preloadYaml();
    const examples = path.join(root, "examples", "scenarios");
    m.simulate(existsSync(examples) ? [samples, examples] : [samples], {}, ignore, ignore);
    m.simulate([samples], { json: true }, ignore, ignore);
    m.simulate([samples], { summary: true }, ignore, ignore);
  });
} finally {
  rmSync(samples, { recursive: true, force: true });
}
