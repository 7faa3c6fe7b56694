// The migrate commands (same meaning as `prisma migrate …`), as functions: the CLI script
// (scripts/migrate.ts), the test helpers and `fleetq dev` (embedded PGlite) call them in-process.
import type { DiagnoseMigrationHistoryOutput } from "@prisma/schema-engine-wasm";
import { withSchemaEngine } from "./engine.js";
import { readMigrationList, writeMigration } from "./migrations-dir.js";
import { projectSchemaLocation, type SchemaLocation } from "./paths.js";
import { ensurePostgresDatabase } from "./pg-adapter.js";

/** Tables and enums the migrations leave alone (prisma.config.ts's `tables.external`, `enums.external`). */
export interface MigrationFilters {
  externalTables: string[];
  externalEnums: string[];
}

export interface MigrateOptions {
  url: string;
  location?: SchemaLocation;
  filters?: MigrationFilters;
}

const noFilters: MigrationFilters = { externalTables: [], externalEnums: [] };

async function ensureDatabase(url: string): Promise<void> {
  if (!url.startsWith("pglite:")) await ensurePostgresDatabase(url); // PGlite creates its folder itself
}

/** = `prisma migrate deploy`: creates the database if missing, applies pending migrations. */
export async function migrateDeploy(opts: MigrateOptions): Promise<string[]> {
  const location = opts.location ?? projectSchemaLocation();
  await ensureDatabase(opts.url);
  return withSchemaEngine(opts.url, location, async ({ engine }) => {
    const out = await engine.applyMigrations({
      migrationsList: readMigrationList(location),
      filters: opts.filters ?? noFilters,
    });
    return out.appliedMigrationNames;
  });
}

export interface MigrateDevResult {
  applied: string[];
  created: string | null;
  warnings: string[];
}

/** = `prisma migrate dev --name <name> [--create-only]` (non-interactive; never resets).
 * The Wasm engine's createMigration and evaluateDataLoss refuse to run ("PostgreSQL shadow DB
 * must be provided through an external factory": they only take the native engine's shadow
 * database), so the new migration is the engine's diff from the migrations folder (replayed on
 * the adapter's shadow database) to the schema: the SQL `prisma migrate dev` would write. The
 * diff carries no data-loss warnings, so the statements that drop data are listed instead. */
export async function migrateDev(opts: MigrateOptions & { name?: string; createOnly?: boolean }) {
  const location = opts.location ?? projectSchemaLocation();
  const filters = opts.filters ?? noFilters;
  await ensureDatabase(opts.url);
  return withSchemaEngine(opts.url, location, async ({ engine, files }): Promise<MigrateDevResult> => {
    const { action } = await engine.devDiagnostic({ migrationsList: readMigrationList(location), filters });
    if (action.tag === "reset") {
      throw new Error(
        `the database needs a reset: ${action.reason} (run: npm run db:migrate -- reset --force)`,
      );
    }
    const applied = (await engine.applyMigrations({ migrationsList: readMigrationList(location), filters }))
      .appliedMigrationNames;
    const diff = await engine.diff({
      from: { tag: "migrations", ...readMigrationList(location) },
      to: { tag: "schemaDatamodel", files },
      script: true,
      exitCode: null,
      filters,
    });
    const script = diff.stdout ?? "";
    const empty = isEmptyMigration(script);
    if (empty && !opts.createOnly) return { applied, created: null, warnings: [] };
    if (!opts.name) throw new Error("--name <migration_name> is required when a new migration is generated");
    const created = writeMigration(location, migrationFolderName(opts.name), script, "postgresql");
    if (!opts.createOnly) {
      const more = await engine.applyMigrations({ migrationsList: readMigrationList(location), filters });
      applied.push(...more.appliedMigrationNames);
    }
    return { applied, created, warnings: dataLossWarnings(script) };
  });
}

/** The engine's diff says "-- This is an empty migration." when nothing changed. */
const isEmptyMigration = (script: string): boolean =>
  script.split("\n").every((line) => line.trim() === "" || line.trim().startsWith("--"));

/** Prisma's folder name: UTC timestamp (YYYYMMDDHHMMSS), '_', the name in snake case. */
function migrationFolderName(name: string, now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:T]/g, "").slice(0, 14);
  const slug = name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
  return `${stamp}_${slug || "migration"}`;
}

/** Statements that lose data (what evaluateDataLoss would warn about), for the warnings. */
function dataLossWarnings(script: string): string[] {
  return script
    .split("\n")
    .map((line) => line.trim())
    .filter((line) =>
      /^(DROP TABLE|ALTER TABLE .* DROP COLUMN|ALTER TABLE .* SET NOT NULL|DROP TYPE)/.test(line),
    )
    .map((line) => `data may be lost: ${line}`);
}

/** = `prisma migrate status`. */
export async function migrateStatus(opts: MigrateOptions): Promise<DiagnoseMigrationHistoryOutput> {
  const location = opts.location ?? projectSchemaLocation();
  return withSchemaEngine(opts.url, location, ({ engine }) =>
    engine.diagnoseMigrationHistory({
      migrationsList: readMigrationList(location),
      optInToShadowDatabase: false,
      filters: opts.filters ?? noFilters,
    }),
  );
}

/** = `prisma migrate diff`: the SQL from the migrations (or empty, or the live DB) to the schema. */
export async function migrateDiff(opts: MigrateOptions & { from: "migrations" | "empty" | "database" }) {
  const location = opts.location ?? projectSchemaLocation();
  return withSchemaEngine(opts.url, location, async ({ engine, files }) => {
    const from =
      opts.from === "empty"
        ? ({ tag: "empty" } as const)
        : opts.from === "database"
          ? ({ tag: "schemaDatasource", files, configDir: location.root } as const)
          : ({ tag: "migrations", ...readMigrationList(location) } as const);
    const r = await engine.diff({
      from,
      to: { tag: "schemaDatamodel", files },
      script: true,
      exitCode: null,
      filters: opts.filters ?? noFilters,
    });
    return r.stdout ?? "";
  });
}

/** = `prisma migrate resolve --applied <m> | --rolled-back <m>`. */
export async function migrateResolve(opts: MigrateOptions & { applied?: string; rolledBack?: string }) {
  const location = opts.location ?? projectSchemaLocation();
  await withSchemaEngine(opts.url, location, async ({ engine }) => {
    if (opts.applied) {
      await engine.markMigrationApplied({
        migrationName: opts.applied,
        migrationsList: readMigrationList(location),
      });
    } else if (opts.rolledBack) {
      await engine.markMigrationRolledBack({ migrationName: opts.rolledBack });
    }
  });
}

/** = `prisma migrate reset --force`: drops everything, re-applies all migrations. */
export async function migrateReset(opts: MigrateOptions): Promise<string[]> {
  const location = opts.location ?? projectSchemaLocation();
  const filters = opts.filters ?? noFilters;
  await ensureDatabase(opts.url);
  return withSchemaEngine(opts.url, location, async ({ engine }) => {
    await engine.reset({ filter: filters });
    return (await engine.applyMigrations({ migrationsList: readMigrationList(location), filters }))
      .appliedMigrationNames;
  });
}
