// The layers of the code base, checked on every import of every .ts file under src/ and workers/:
//   - src/core imports nothing else of the project (a pure library);
//   - src/agent does not import the store, the API or the workers (it speaks GraphQL and Redis);
//   - src/store does not import the API, the CLI or the workers;
//   - outside src/store, the store is reached through its index (src/store/index.ts) only,
//     nothing imports Prisma's generated client or types or @prisma/client, and nothing touches
//     the Prisma client a Store holds (`store.prisma`): the store's named queries and operations
//     are the way in.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "..");

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.posix.join(dir, e.name);
    if (e.isDirectory()) {
      if (rel !== "src/store/generated") out.push(...sources(rel));
    } else if (e.name.endsWith(".ts")) out.push(rel);
  }
  return out;
}

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["']([^"']+)["']/gm;

/** Every module a file imports (static, re-exported or dynamic), as written. */
function importsOf(text: string): string[] {
  const text2 = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  return [...text2.matchAll(IMPORT)].map((m) => m[1]!);
}

/** The project path an import names (relative imports resolved; .js as .ts), else null. */
function target(file: string, spec: string): string | null {
  if (!spec.startsWith(".")) return null;
  return path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)).replace(/\.js$/, ".ts");
}

const under = (p: string, dir: string) => p === dir || p.startsWith(`${dir}/`);

/** The rules a file breaks with one import (messages name the file, the import and the rule). */
function violations(file: string, spec: string): string[] {
  const out: string[] = [];
  const t = target(file, spec);
  const outsideStore = !under(file, "src/store");
  if (outsideStore && (spec === "@prisma/client" || spec.startsWith("@prisma/client/")))
    out.push(`${file} imports ${spec}: Prisma is the store's, behind src/store/index.ts`);
  if (t === null) return out;
  if (under(file, "src/core") && !under(t, "src/core"))
    out.push(`${file} imports ${spec}: src/core imports nothing else of the project`);
  if (under(file, "src/agent") && ["src/store", "src/api", "workers"].some((d) => under(t, d)))
    out.push(`${file} imports ${spec}: src/agent does not import the store, the API or the workers`);
  if (!outsideStore && ["src/api", "src/cli", "workers"].some((d) => under(t, d)))
    out.push(`${file} imports ${spec}: src/store does not import the API, the CLI or the workers`);
  if (outsideStore && under(t, "src/store") && t !== "src/store/index.ts")
    out.push(`${file} imports ${spec}: outside the store, only src/store/index.ts`);
  return out;
}

/** Uses of the Prisma client outside the store (`x.prisma`, `x.prisma.model…`). */
function prismaUses(file: string, text: string): string[] {
  if (under(file, "src/store")) return [];
  const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
  const uses = code.match(/\.prisma\b/g)?.length ?? 0;
  return uses
    ? [`${file} uses the Prisma client ${uses} time(s): outside the store, its named queries only`]
    : [];
}

describe("layers", () => {
  const files = [...sources("src"), ...sources("workers")];
  const found = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(path.join(ROOT, file), "utf8");
    const v = [...importsOf(text).flatMap((spec) => violations(file, spec)), ...prismaUses(file, text)];
    if (v.length) found.set(file, v);
  }

  it("every import keeps to its layer", () => {
    expect([...found.values()].flat()).toEqual([]);
  });

  it("catches each kind of violation", () => {
    expect(violations("src/core/a.ts", "../store/index.js")).toHaveLength(1);
    expect(violations("src/core/x/a.ts", "../b.js")).toEqual([]);
    expect(violations("src/agent/a.ts", "../store/index.js")).toHaveLength(1);
    expect(violations("src/agent/a.ts", "../../workers/index.js")).toHaveLength(1);
    expect(violations("src/store/a.ts", "../api/server.js")).toHaveLength(1);
    expect(violations("src/api/a.ts", "../store/db.js")).toHaveLength(1);
    expect(violations("src/api/a.ts", "../store/index.js")).toEqual([]);
    expect(violations("src/api/a.ts", "../store/generated/prisma/client.js")).toHaveLength(1);
    expect(violations("workers/a.ts", "@prisma/client/runtime/client")).toHaveLength(1);
    expect(violations("src/store/a.ts", "./generated/prisma/client.js")).toEqual([]);
    expect(prismaUses("src/api/a.ts", "await ctx.store.prisma.job.findMany()")).toHaveLength(1);
    expect(prismaUses("src/api/a.ts", "// store.prisma in a comment\nconst prismaLike = 1;")).toEqual([]);
    expect(prismaUses("src/store/a.ts", "store.prisma.job")).toEqual([]);
    expect(
      importsOf('import type { A } from "./a.js";\nexport { b } from "./b.js";\nawait import("./c.js");'),
    ).toEqual(["./a.js", "./b.js", "./c.js"]);
  });
});
