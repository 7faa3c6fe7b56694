// A prebuilt CommonJS bundle run with V8's code cache for it: the build (scripts/build.mjs) bundles
// the code of a short-lived command into one file and, after running it on sample input, writes
// the compiled code of what ran beside it, so the command starts without compiling it again. A
// cache that does not match the bundle or this Node.js is refused by V8, and the bundle is then
// compiled as usual; without the bundle (running from the sources) the caller imports the module.
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import vm from "node:vm";

const cacheFileOf = (file: string) => `${file}.cache`;

function compile(file: string, cachedData?: Buffer): vm.Script | null {
  let source: string;
  try {
    source = readFileSync(file, "utf8");
  } catch {
    return null;
  }
  // the wrapper CommonJS modules get, so the bundle's require and module work
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
  return new vm.Script(wrapped, { filename: file, cachedData });
}

function run<T>(script: vm.Script, file: string): T {
  const module = { exports: {} as T };
  (script.runInThisContext() as (...a: unknown[]) => void)(
    module.exports,
    createRequire(file),
    module,
    file,
    dirname(file),
  );
  return module.exports;
}

/** The bundle's exports, or null when there is no bundle at `url`. */
export function loadBundle<T>(url: URL): T | null {
  const file = fileURLToPath(url);
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFileOf(file));
  } catch {
    cachedData = undefined;
  }
  const script = compile(file, cachedData);
  return script && run<T>(script, file);
}

/** Loads the bundle at `file` without a cache, runs `warm` on its exports, then writes the cache. */
export async function writeBundleCache<T>(file: string, warm: (exports: T) => Promise<void>): Promise<void> {
  const script = compile(file);
  if (!script) throw new Error(`${file}: no such bundle`);
  await warm(run<T>(script, file));
  writeFileSync(cacheFileOf(file), script.createCachedData());
}
