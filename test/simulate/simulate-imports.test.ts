// `fleetq simulate` starts fast because its code loads few packages: the modules it reaches by
// static imports (from the command's lazily imported entry) use no schema library, GraphQL,
// database or queue client, and YAML only through the lazy loader of files.ts.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const STATIC_IMPORT = /^\s*(?:import|export)\s+(?!type\b)[^;]*?\bfrom\s*["']([^"']+)["']/gm;

/** Every project module and package reached from `entry` by static (non-type) imports. */
function staticClosure(entry: string): { modules: Set<string>; packages: Set<string> } {
  const modules = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (modules.has(file)) return;
    modules.add(file);
    const text = readFileSync(path.join(ROOT, file), "utf8").replace(/\/\*[\s\S]*?\*\//g, "");
    for (const m of text.matchAll(STATIC_IMPORT)) {
      const spec = m[1]!;
      if (spec.startsWith("."))
        visit(path.posix.join(path.posix.dirname(file), spec).replace(/\.js$/, ".ts"));
      else if (!spec.startsWith("node:"))
        packages.add(
          spec
            .split("/")
            .slice(0, spec.startsWith("@") ? 2 : 1)
            .join("/"),
        );
    }
  };
  visit(entry);
  return { modules, packages };
}

describe("fleetq simulate's code", () => {
  it("loads no package by static import (YAML only when a YAML file is read)", () => {
    const { modules, packages } = staticClosure("src/simulate/command.ts");
    expect(modules.has("src/simulate/scenario.ts")).toBe(true);
    expect(modules.has("src/core/index.ts")).toBe(true);
    expect([...packages]).toEqual([]);
  });

  it("the command itself imports only the simulate entry, when run", () => {
    const text = readFileSync(path.join(ROOT, "src/cli/commands/simulate.ts"), "utf8");
    expect([...text.matchAll(STATIC_IMPORT)].map((m) => m[1])).toEqual([]);
    expect(text).toContain('await import("../../simulate/command.js")');
  });
});
