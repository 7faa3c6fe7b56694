// Benchmark of the client package (packages/cli) as a CI pipeline installs it (not a test): the
// tarball `npm pack` makes of it, then `npm install -g` of that tarball into an empty prefix with
// an empty npm cache and no registry (--offline: the package has no dependencies), timed as a whole
// process; the installed size; and the start of the installed `fleetq --version` and `fleetq
// --help` (which loads the command tree). Next to it, the size of the repository's node_modules,
// what a pipeline installed before to run the command. Needs `npm run build` first.
//
//   npm run bench:cli-package                (runs 7; --runs N, --json)
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, mkdtempSync, readdirSync, realpathSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { median } from "./timing.js";

const { values: args } = parseArgs({
  options: {
    runs: { type: "string", default: "7" },
    json: { type: "boolean", default: false },
  },
});
const RUNS = Number(args.runs);
const ROOT = path.resolve(import.meta.dirname, "..");
const PACKAGE_DIR = path.join(ROOT, "packages", "cli");
const MB = 1024 * 1024;

if (!existsSync(path.join(PACKAGE_DIR, "dist", "fleetq.js"))) {
  console.error("bench:cli-package: packages/cli/dist is not built: run `npm run build` first");
  process.exit(1);
}

/** Bytes of the files under `dir` (symbolic links counted as links, not followed). */
function sizeOf(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    total += entry.isDirectory() ? sizeOf(p) : lstatSync(p).size;
  }
  return total;
}

/** Runs a command to its end; its wall time in ms. */
function timed(command: string, argv: string[], cwd: string, env: NodeJS.ProcessEnv): [number, string] {
  const t0 = performance.now();
  const r = spawnSync(command, argv, { cwd, env, encoding: "utf8" });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${command} ${argv.join(" ")} exited ${r.status}: ${r.stderr}`);
  return [ms, r.stdout];
}

const dir = mkdtempSync(path.join(tmpdir(), "fleetq-bench-cli-package-"));
const npmEnv = { PATH: process.env.PATH, HOME: dir, npm_config_update_notifier: "false" };
const npm = (argv: string[], cache: string) =>
  timed("npm", [...argv, "--offline", "--no-audit", "--no-fund", "--cache", cache], dir, npmEnv);

const report = (step: string, value: string, extra: Record<string, unknown>) => {
  if (args.json) console.log(JSON.stringify({ step, ...extra }));
  else console.log(`${step.padEnd(40)} ${value}`);
};
const spread = (xs: number[]) => ({
  medianMs: Math.round(median(xs)),
  minMs: Math.round(Math.min(...xs)),
  maxMs: Math.round(Math.max(...xs)),
});
const ms = (s: ReturnType<typeof spread>) => `median ${s.medianMs} ms (min ${s.minMs}, max ${s.maxMs})`;

try {
  const [, packed] = npm(
    ["pack", PACKAGE_DIR, "--pack-destination", dir, "--json"],
    path.join(dir, "cache-pack"),
  );
  const [info] = JSON.parse(packed) as { filename: string; size: number; unpackedSize: number }[];
  const tarball = path.join(dir, info!.filename);
  report(
    "tarball",
    `${(info!.size / MB).toFixed(2)} MB (${(info!.unpackedSize / MB).toFixed(2)} MB unpacked)`,
    {
      bytes: info!.size,
      unpackedBytes: info!.unpackedSize,
    },
  );

  /** One install into an empty prefix with an empty cache, as on a fresh CI runner. */
  const install = (i: number) => {
    const prefix = path.join(dir, `prefix-${i}`);
    const [t] = npm(["install", "-g", "--prefix", prefix, tarball], path.join(dir, `cache-${i}`));
    return { t, prefix };
  };
  install(-1); // warm-up (file cache)
  const installs = Array.from({ length: RUNS }, (_, i) => install(i));
  const installSpread = spread(installs.map((x) => x.t));
  report("npm install -g <tarball> --offline", ms(installSpread), installSpread);

  const prefix = installs[0]!.prefix;
  const installed = sizeOf(prefix);
  report("installed (the prefix)", `${(installed / MB).toFixed(2)} MB`, { bytes: installed });

  const bin = path.join(prefix, "bin", "fleetq");
  const runEnv = { PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`, HOME: dir };
  for (const argv of [["--version"], ["--help"]]) {
    timed(bin, argv, dir, runEnv); // warm-up
    const s = spread(Array.from({ length: RUNS }, () => timed(bin, argv, dir, runEnv)[0]));
    report(`installed fleetq ${argv[0]}`, ms(s), s);
  }

  const repoModules = sizeOf(realpathSync(path.join(ROOT, "node_modules")));
  report("the repository's node_modules", `${(repoModules / MB).toFixed(0)} MB`, { bytes: repoModules });
  const [l1, l5] = loadavg();
  if (!args.json) console.log(`runs ${RUNS}; load average ${l1!.toFixed(2)} ${l5!.toFixed(2)}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
