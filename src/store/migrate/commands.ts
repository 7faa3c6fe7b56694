// The migrate commands (same meaning as `prisma migrate …`), as functions: the CLI script
// (scripts/migrate.ts), the test helpers and `fleetq dev` (embedded PGlite) call them in-process.
import type { DiagnoseMigrationHistoryOutput, SchemaFilter } from "@prisma/schema-engine-wasm";
import { withSchemaEngine } from "./engine.js";
import { readMigrationList, writeMigration } from "./migrations-dir.js";
import { projectSchemaLocation, type SchemaLocation } from "./paths.js";
import { ensurePostgresDatabase } from "./pg-adapter.js";

export interface MigrateOptions {
  url: string;
  location?: SchemaLocation;
  filters?: SchemaFilter;
}

const noFilters: SchemaFilter = { externalTables: [], externalEnums: [] };

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

/** = `prisma migrate dev --name <name> [--create-only]` (non-interactive; never resets). */
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
    const schema = { files };
    const loss = await engine.evaluateDataLoss({
      migrationsList: readMigrationList(location),
      schema,
      filters,
    });
    if (loss.unexecutableSteps.length)
      throw new Error(loss.unexecutableSteps.map((s) => s.message).join("\n"));
    const warnings = loss.warnings.map((w) => w.message);
    if (loss.migrationSteps === 0 && !opts.createOnly) return { applied, created: null, warnings };
    if (!opts.name) throw new Error("--name <migration_name> is required when a new migration is generated");
    const out = await engine.createMigration({
      migrationsList: readMigrationList(location),
      schema,
      filters,
      migrationName: opts.name,
      draft: !!opts.createOnly,
    });
    if (out.migrationScript === null) return { applied, created: null, warnings };
    const created = writeMigration(
      location,
      out.generatedMigrationName,
      out.migrationScript,
      out.connectorType,
    );
    if (!opts.createOnly) {
      const more = await engine.applyMigrations({ migrationsList: readMigrationList(location), filters });
      applied.push(...more.appliedMigrationNames);
    }
    return { applied, created, warnings };
  });
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
