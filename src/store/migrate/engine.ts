// Prisma's schema engine compiled to WebAssembly, driven through a driver adapter: migrations
// without the native engine binary (whose download host is unreachable offline). It writes the same
// _prisma_migrations table, checksums and advisory lock as the CLI, so `prisma migrate deploy`
// from a machine with internet works on the same database.
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { bindMigrationAwareSqlAdapterFactory } from "@prisma/driver-adapter-utils";
import type { SchemaEngine } from "@prisma/schema-engine-wasm";
import { readSchemaFiles, type SchemaFile } from "./migrations-dir.js";
import type { SchemaLocation } from "./paths.js";
import { pgMigrationAdapter } from "./pg-adapter.js";
import { pgliteMigrationAdapter } from "./pglite-adapter.js";

const require = createRequire(import.meta.url);

function resolveOrNull(specifier: string): string | null {
  try {
    return require.resolve(specifier);
  } catch {
    return null;
  }
}

// tsconfig's lib has no WebAssembly typings (no DOM): the little we use, declared here.
interface WasmApi {
  Module: { new (bytes: Uint8Array): object; imports(m: object): { name: string }[] };
  Instance: new (m: object, imports: Record<string, unknown>) => { exports: Record<string, unknown> };
}
const Wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

type Glue = Record<string, unknown> & {
  __wbg_set_wasm(exports: Record<string, unknown>): void;
  SchemaEngine: { new: (...args: unknown[]) => Promise<SchemaEngine> };
  version(): string;
};

let instantiated: Promise<Glue> | undefined;

/** The engine arms a 10 s timer (its advisory-lock timeout) and never clears it; unref'd, it cannot
 * keep a finished process (a test worker, the migrate script) alive. */
function withUnrefTimers(glue: Glue): Record<string, unknown> {
  const imports: Record<string, unknown> = { ...glue };
  for (const [name, fn] of Object.entries(glue)) {
    if (!name.startsWith("__wbg_setTimeout_") || typeof fn !== "function") continue;
    imports[name] = (...args: unknown[]) => {
      const timer = fn(...args);
      (timer as { unref?: () => void })?.unref?.();
      return timer;
    };
  }
  return imports;
}

/** The wasm module is instantiated once per process; engines are cheap after that. */
function loadGlue(): Promise<Glue> {
  instantiated ??= (async () => {
    const g = globalThis as { PRISMA_WASM_PANIC_REGISTRY?: unknown };
    let panic = "";
    g.PRISMA_WASM_PANIC_REGISTRY ??= {
      set_message: (m: string) => {
        panic = `RuntimeError: ${m}`;
      },
      get: () => panic,
    };
    const glue = (await import("@prisma/schema-engine-wasm/schema_engine_bg")) as unknown as Glue;
    // Prefer the .wasm inside the installed prisma CLI (same engine build as the CLI) when the
    // pinned glue satisfies its imports; else the .wasm shipped with the glue package.
    // The prisma CLI is a development dependency: absent where only production dependencies are.
    const cli = resolveOrNull("prisma/package.json");
    const candidates = [
      ...(cli ? [path.join(path.dirname(cli), "build/schema_engine_bg.wasm")] : []),
      path.join(
        path.dirname(require.resolve("@prisma/schema-engine-wasm/schema_engine_bg")),
        "schema_engine_bg.wasm",
      ),
    ];
    for (const file of candidates) {
      if (!fs.existsSync(file)) continue;
      const mod = new Wasm.Module(fs.readFileSync(file));
      if (!Wasm.Module.imports(mod).every((i) => typeof glue[i.name] === "function")) continue;
      const instance = new Wasm.Instance(mod, { "./schema_engine_bg.js": withUnrefTimers(glue) });
      glue.__wbg_set_wasm(instance.exports);
      (instance.exports.__wbindgen_start as () => void)();
      return glue;
    }
    throw new Error("no schema_engine_bg.wasm compatible with @prisma/schema-engine-wasm");
  })();
  return instantiated;
}

export interface OpenEngine {
  engine: SchemaEngine;
  files: SchemaFile[];
  version: string;
}

/**
 * Runs `fn` with a schema engine connected to `url` (postgresql://… or pglite:<dir>), then frees
 * the engine and closes every connection it opened (the engine itself never disposes its adapters).
 */
export async function withSchemaEngine<T>(
  url: string,
  location: SchemaLocation,
  fn: (e: OpenEngine) => Promise<T>,
): Promise<T> {
  const glue = await loadGlue();
  const opened: { dispose(): Promise<void> }[] = [];
  let engine: SchemaEngine | undefined;
  try {
    const factory = url.startsWith("pglite:")
      ? await pgliteMigrationAdapter(path.resolve(location.root, url.slice("pglite:".length)), opened)
      : pgMigrationAdapter(url, opened);
    const files = readSchemaFiles(location);
    engine = await glue.SchemaEngine.new(
      { datamodels: files.map((f) => [f.path, f.content]) },
      (log: string) => process.env.DEBUG && console.error("[schema-engine]", log),
      bindMigrationAwareSqlAdapterFactory(factory),
    );
    return await fn({ engine, files, version: glue.version() });
  } finally {
    engine?.free();
    await Promise.allSettled(opened.splice(0).map((a) => a.dispose()));
  }
}
