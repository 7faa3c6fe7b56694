// Dependencies loaded on first use, synchronously: a command that never needs one (`--version`,
// `simulate`, most API commands) starts without paying for it.
import { createRequire } from "node:module";

const requireModule = createRequire(import.meta.url);

/** `name` required on the first call of the returned function. */
export function lazyRequire<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= requireModule(name) as T;
    return loaded;
  };
}
