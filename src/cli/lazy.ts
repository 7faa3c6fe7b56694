// Dependencies loaded on first use, synchronously: a command that never needs one (`--version`,
// `simulate`, most API commands) starts without paying for it.
import { createRequire } from "node:module";

const requireModule = createRequire(import.meta.url);

/** The packages loaded so: named here so that the client package's bundle carries them
 * (scripts/build.mjs: a require a bundler can see stands in for this module there). */
export const LAZY_PACKAGES = ["yaml", "cli-progress"] as const;

/** `name` required on the first call of the returned function. */
export function lazyRequire<T>(name: (typeof LAZY_PACKAGES)[number]): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= requireModule(name) as T;
    return loaded;
  };
}
