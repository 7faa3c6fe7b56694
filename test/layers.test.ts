// The layers of the code base, checked on every import of every .ts file under src/ and workers/:
//   - src/core imports nothing else of the project (a pure library);
//   - outside src/core, the core is reached through its index (src/core/index.ts) only; the
//     benchmarks, scripts and tests are held to it too, except the core's own tests (test/core),
//     which check its internals, and the few imports CORE_LEAVES names with their reason;
//   - src/core/actions does not import src/core/plugins: what both need lives in the core's
//     api, framework or util;
//   - src/agent does not import the store, the API or the workers (it speaks GraphQL and Redis);
//   - src/store does not import the API, the CLI or the workers, nor what runs the core's
//     scheduling (a session, fair shares): it gives the core its input and commits its result;
//   - outside src/store, the store is reached through its index (src/store/index.ts) only,
//     nothing imports Prisma's generated client or types or @prisma/client, and nothing touches
//     the Prisma client behind a Store (`.prisma`): the store's named queries and operations
//     are the way in;
//   - no name the store's index exports has a type that mentions one of Prisma's (the checker
//     follows each export's type through what a caller can reach: test/helpers/exported-types.ts);
//   - the store's test entry (src/store/testing.ts: the Prisma client behind a Store) is for tests
//     and benchmarks: nothing under src/, workers/, bin/ or scripts/ imports it;
//   - src/store/README.md names every export of the store's index.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportsMentioning, openProject } from "./helpers/exported-types.js";

const ROOT = path.resolve(import.meta.dirname, "..");

function sources(dir: string, ext = /\.ts$/): string[] {
  const out: string[] = [];
  for (const e of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.posix.join(dir, e.name);
    if (e.isDirectory()) {
      if (rel !== "src/store/generated") out.push(...sources(rel, ext));
    } else if (ext.test(e.name)) out.push(rel);
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

/** An import of Prisma's generated client (src/store/generated) or of @prisma/client. */
function isPrismaImport(file: string, spec: string): boolean {
  if (spec === "@prisma/client" || spec.startsWith("@prisma/client/")) return true;
  const t = target(file, spec);
  return t !== null && under(t, "src/store/generated");
}

/** `{ a, type B, c as d }` → the names it gives: a, B, d. */
const exportedNames = (list: string) =>
  list
    .split(",")
    .map(
      (n) =>
        n
          .replace(/^\s*type\s+/, "")
          .trim()
          .split(/\s+as\s+/)
          .at(-1)!,
    )
    .filter(Boolean);

const EXPORT_FROM = /\bexport\s+(?:type\s+)?\{([^}]*)\}\s*from\s*["']([^"']+)["']/g;

/** The names a store module takes from Prisma: imported or re-exported from the generated
 * client, and the client types db.ts re-exports. */
function prismaNames(file: string, text: string): Set<string> {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  const names = new Set(["PrismaClient", "Prisma", "Tx"]);
  for (const m of code.matchAll(/\b(?:import|export)\s+(?:type\s+)?\{([^}]*)\}\s*from\s*["']([^"']+)["']/g))
    if (isPrismaImport(file, m[2]!)) for (const n of exportedNames(m[1]!)) names.add(n);
  return names;
}

/** What the store's index exports that is Prisma's: re-exports from the generated client, and
 * names it hands on from a store module that took them from Prisma. */
function prismaReexports(index: string, text: string, read: (file: string) => string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  const out: string[] = [];
  for (const m of code.matchAll(EXPORT_FROM)) {
    const spec = m[2]!;
    const names = exportedNames(m[1]!);
    if (isPrismaImport(index, spec)) {
      out.push(...names.map((n) => `${n} from ${spec}`));
      continue;
    }
    const t = target(index, spec);
    if (!t) continue;
    const taken = prismaNames(t, read(t));
    out.push(...names.filter((n) => taken.has(n)).map((n) => `${n} from ${spec} (Prisma's)`));
  }
  return out;
}

/** An import of the store's test entry (src/store/testing.ts, or its build in dist/). */
function isTestEntryImport(file: string, spec: string): boolean {
  const t = target(file, spec);
  return t !== null && /^(?:src|dist|dist\/src)\/store\/testing\.ts$/.test(t);
}

/** Declared by Prisma: its generated client, its packages. */
const isPrismaDeclaration = (file: string) =>
  /\/src\/store\/generated\/|\/node_modules\/(?:@prisma|\.prisma)\//.test(file);
/** Declared by the project itself: the checker enters these types' members. */
const isProjectDeclaration = (file: string) =>
  file.startsWith(`${ROOT}/`) && !file.includes("/node_modules/") && !isPrismaDeclaration(file);

/** Imports of a dependency-free core module where importing the index would cost, as file → module. */
const CORE_LEAVES: Record<string, string> = {
  // The CLI's everyday commands read durations; the index would load the whole core at every start.
  "src/cli/duration.ts": "src/core/util/duration.ts",
};

/** An import of the core's internals from a file that must reach the core through its index. */
function coreInternalsError(file: string, spec: string): string | null {
  const t = target(file, spec);
  if (t === null || under(file, "src/core") || under(file, "test/core") || CORE_LEAVES[file] === t)
    return null;
  return under(t, "src/core") && t !== "src/core/index.ts"
    ? `${file} imports ${spec}: outside the core, only src/core/index.ts`
    : null;
}

/** The rules a file breaks with one import (messages name the file, the import and the rule). */
function violations(file: string, spec: string): string[] {
  const out: string[] = [];
  const t = target(file, spec);
  const outsideStore = !under(file, "src/store");
  if (outsideStore && isPrismaImport(file, spec))
    out.push(`${file} imports ${spec}: Prisma is the store's, behind src/store/index.ts`);
  if (t === null) return out;
  if (under(file, "src/core") && !under(t, "src/core"))
    out.push(`${file} imports ${spec}: src/core imports nothing else of the project`);
  const internals = coreInternalsError(file, spec);
  if (internals) out.push(internals);
  if (under(file, "src/core/actions") && under(t, "src/core/plugins"))
    out.push(`${file} imports ${spec}: src/core/actions does not import src/core/plugins`);
  if (under(file, "src/agent") && ["src/store", "src/api", "workers"].some((d) => under(t, d)))
    out.push(`${file} imports ${spec}: src/agent does not import the store, the API or the workers`);
  if (!outsideStore && ["src/api", "src/cli", "workers"].some((d) => under(t, d)))
    out.push(`${file} imports ${spec}: src/store does not import the API, the CLI or the workers`);
  if (outsideStore && under(t, "src/store") && t !== "src/store/index.ts" && !isPrismaImport(file, spec))
    out.push(`${file} imports ${spec}: outside the store, only src/store/index.ts`);
  return out;
}

/** What runs the core's scheduling: the store's callers do, on what the store reads. */
const SCHEDULER_RUNS = new Set([
  "runSession",
  "computeFairShare",
  "openSession",
  "sessionResult",
  "createAction",
  "advanceSnapshot",
]);

/** Imports into the store of what runs the core's scheduling. */
function schedulerRuns(file: string, text: string): string[] {
  if (!under(file, "src/store")) return [];
  const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  const out: string[] = [];
  for (const m of code.matchAll(/\bimport\s+(?:type\s+)?\{([^}]*)\}\s*from\s*["']([^"']+)["']/g)) {
    const t = target(file, m[2]!);
    if (t === null || !under(t, "src/core")) continue;
    const names = m[1]!.split(",").map(
      (n) =>
        n
          .replace(/^\s*type\s+/, "")
          .trim()
          .split(/\s+as\s+/)[0]!,
    );
    for (const n of names.filter((n) => SCHEDULER_RUNS.has(n)))
      out.push(`${file} imports ${n}: the store gives the core its input, its callers run it`);
  }
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
    const v = [
      ...importsOf(text).flatMap((spec) => violations(file, spec)),
      ...prismaUses(file, text),
      ...schedulerRuns(file, text),
    ];
    if (v.length) found.set(file, v);
  }

  it("every import keeps to its layer", () => {
    expect([...found.values()].flat()).toEqual([]);
  });

  it("no benchmark, script or test outside the store's own imports Prisma's generated client", () => {
    const others = [...sources("bench"), ...sources("scripts"), ...sources("test")].filter(
      (f) => !under(f, "test/store"),
    );
    const uses = others.flatMap((file) =>
      importsOf(readFileSync(path.join(ROOT, file), "utf8"))
        .filter((spec) => isPrismaImport(file, spec))
        .map((spec) => `${file} imports ${spec}`),
    );
    expect(uses).toEqual([]);
  });

  it("benchmarks, scripts and tests other than the core's own reach the core through its index", () => {
    const others = [...sources("bench"), ...sources("scripts"), ...sources("test")];
    const uses = others.flatMap((file) =>
      importsOf(readFileSync(path.join(ROOT, file), "utf8")).flatMap(
        (spec) => coreInternalsError(file, spec) ?? [],
      ),
    );
    expect(uses).toEqual([]);
  });

  it("the store's index, and the modules it hands on, export plain types only, never Prisma's", () => {
    const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");
    expect(prismaReexports("src/store/index.ts", read("src/store/index.ts"), read)).toEqual([]);
  });

  it("the store's README names every export of its index", () => {
    const code = readFileSync(path.join(ROOT, "src/store/index.ts"), "utf8").replace(/^\s*\/\/.*$/gm, "");
    const names = [...code.matchAll(/\bexport\s+(?:type\s+)?\{([^}]*)\}/g)].flatMap((m) =>
      exportedNames(m[1]!),
    );
    // Fences dropped: their backticks would pair with those of the code spans.
    const readme = readFileSync(path.join(ROOT, "src/store/README.md"), "utf8").replaceAll("```", "");
    const named = new Set([...readme.matchAll(/`([^`]+)`/g)].flatMap((m) => m[1]!.match(/[\w$]+/g) ?? []));
    expect(names.filter((n) => !named.has(n))).toEqual([]);
  });

  it("nothing under src/, workers/, bin/ or scripts/ imports the store's test entry", () => {
    const product = [...sources("src"), ...sources("workers"), ...sources("bin", /\.m?[jt]s$/)].concat(
      sources("scripts", /\.m?[jt]s$/),
    );
    const uses = product.flatMap((file) =>
      importsOf(readFileSync(path.join(ROOT, file), "utf8"))
        .filter((spec) => isTestEntryImport(file, spec))
        .map((spec) => `${file} imports ${spec}: src/store/testing.ts is for tests and benchmarks`),
    );
    expect(uses).toEqual([]);
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
    expect(violations("src/api/a.ts", "../core/api/spec.js")).toHaveLength(1);
    expect(violations("src/store/x/a.ts", "../../core/api/spec.js")).toHaveLength(1);
    expect(violations("workers/x/a.ts", "../../src/core/index.js")).toEqual([]);
    expect(violations("src/core/x/a.ts", "../api/spec.js")).toEqual([]);
    expect(violations("src/core/actions/x/a.ts", "../../plugins/predicates/index.js")).toHaveLength(1);
    expect(violations("src/core/plugins/x/a.ts", "../../framework/session.js")).toEqual([]);
    expect(coreInternalsError("bench/a.ts", "../src/core/util/random.js")).not.toBeNull();
    expect(coreInternalsError("test/store/a.test.ts", "../../src/core/api/result.js")).not.toBeNull();
    expect(coreInternalsError("test/core/a.test.ts", "../../src/core/api/result.js")).toBeNull();
    expect(coreInternalsError("test/simulate/a.test.ts", "../core/helpers.js")).toBeNull();
    expect(coreInternalsError("src/cli/duration.ts", "../core/util/duration.js")).toBeNull();
    expect(coreInternalsError("src/cli/duration.ts", "../core/util/random.js")).not.toBeNull();
    expect(isPrismaImport("test/api/a.test.ts", "../../src/store/generated/prisma/client.js")).toBe(true);
    expect(isPrismaImport("bench/a.ts", "../src/store/index.js")).toBe(false);
    const files: Record<string, string> = {
      "src/store/db.ts":
        'import { PrismaClient } from "./generated/prisma/client.js";\nexport { PrismaClient };',
      "src/store/q.ts": 'import type { Node } from "./generated/prisma/client.js";\nexport type { Node };',
      "src/store/types.ts": "export interface Job {}",
    };
    const leaks = (index: string) => prismaReexports("src/store/index.ts", index, (f) => files[f] ?? "");
    expect(leaks('export type { Job } from "./generated/prisma/client.js";')).toEqual([
      "Job from ./generated/prisma/client.js",
    ]);
    expect(leaks('export type { Node } from "./q.js";')).toEqual(["Node from ./q.js (Prisma's)"]);
    expect(leaks('export { openDatabase, type PrismaClient } from "./db.js";')).toEqual([
      "PrismaClient from ./db.js (Prisma's)",
    ]);
    expect(leaks('export type { Job } from "./types.js";')).toEqual([]);
    expect(isTestEntryImport("src/api/a.ts", "../store/testing.js")).toBe(true);
    expect(isTestEntryImport("bin/a.mjs", "../dist/store/testing.js")).toBe(true);
    expect(isTestEntryImport("src/store/a.ts", "./client.js")).toBe(false);
    expect(prismaUses("src/api/a.ts", "await ctx.store.prisma.job.findMany()")).toHaveLength(1);
    expect(prismaUses("src/api/a.ts", "// store.prisma in a comment\nconst prismaLike = 1;")).toEqual([]);
    expect(prismaUses("src/store/a.ts", "store.prisma.job")).toEqual([]);
    const fromCore = 'import { computeFairShare, type Snapshot } from "../../core/index.js";';
    expect(schedulerRuns("src/store/queries/a.ts", fromCore)).toHaveLength(1);
    expect(schedulerRuns("src/api/a.ts", fromCore)).toEqual([]);
    expect(
      schedulerRuns("src/store/queries/a.ts", 'import type { Snapshot } from "../../core/index.js";'),
    ).toEqual([]);
    expect(
      importsOf('import type { A } from "./a.js";\nexport { b } from "./b.js";\nawait import("./c.js");'),
    ).toEqual(["./a.js", "./b.js", "./c.js"]);
  });
});

describe("the store's exported types", () => {
  let ts: ReturnType<typeof openProject>;
  beforeAll(() => {
    ts = openProject(ROOT);
  });
  afterAll(() => ts.close());
  const mentions = (file: string) =>
    exportsMentioning(ts.project, file, isPrismaDeclaration, isProjectDeclaration);

  it("no name the store's index exports has a type that mentions one of Prisma's", () => {
    expect(mentions("src/store/index.ts")).toEqual([]);
  });

  it("finds Prisma's types in a module that hands them on", () => {
    expect(mentions("src/store/client.ts")).toEqual([
      "holdClient(prisma): PrismaClient",
      "prismaOf(): PrismaClient",
    ]);
    const db = mentions("src/store/db.ts");
    expect(db).toContain("poolOf(prisma): PrismaClient");
    expect(db).toContain("Tx.job: JobDelegate<DefaultArgs, { omit: GlobalOmitConfig | undefined; }>");
  });
});
