// Offline `prisma migrate` (npm run db:migrate): Prisma's schema engine compiled to Wasm, through a
// driver adapter — adapter-pg for postgresql:// URLs, PGlite for pglite:<dir>. Reads prisma.config.ts
// with the CLI's own loader, so it targets the same schema, migrations folder and database.
//
//   tsx scripts/migrate.ts deploy                               (= prisma migrate deploy)
//   tsx scripts/migrate.ts dev --name <n> [--create-only]       (= prisma migrate dev, non-interactive)
//   tsx scripts/migrate.ts status                               (= prisma migrate status)
//   tsx scripts/migrate.ts diff [--from-empty|--from-db]        (prints SQL; default from the migrations)
//   tsx scripts/migrate.ts resolve --applied <m> | --rolled-back <m>
//   tsx scripts/migrate.ts reset --force                        (drops everything, re-applies)
import path from "node:path";
import { parseArgs } from "node:util";
import { loadConfigFromFile } from "@prisma/config";
import {
  migrateDeploy,
  migrateDev,
  migrateDiff,
  migrateReset,
  migrateResolve,
  migrateStatus,
  type SchemaLocation,
} from "../src/store/migrate/index.js";

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    name: { type: "string" },
    "create-only": { type: "boolean" },
    force: { type: "boolean" },
    "from-empty": { type: "boolean" },
    "from-db": { type: "boolean" },
    config: { type: "string" },
    applied: { type: "string" },
    "rolled-back": { type: "string" },
  },
});

const usage =
  "usage: migrate.ts <deploy | dev --name N [--create-only] | status | diff [--from-empty|--from-db] |" +
  " resolve --applied M|--rolled-back M | reset --force> [--config prisma.config.ts]";

const printApplied = (names: string[]) =>
  console.log(
    names.length
      ? `Applied ${names.length} migration(s):\n${names.map((n) => `  └─ ${n}/migration.sql`).join("\n")}`
      : "No pending migrations to apply.",
  );

async function main(): Promise<void> {
  const loaded = await loadConfigFromFile({ configFile: opts.config });
  if (loaded.error) throw new Error(`cannot load the prisma config: ${loaded.error._tag}`);
  const cfg = loaded.config;
  const root = loaded.resolvedPath ? path.dirname(loaded.resolvedPath) : process.cwd();
  const url = cfg.datasource?.url ?? process.env.DATABASE_URL;
  if (!url) throw new Error("datasource.url is not set (prisma.config.ts / DATABASE_URL)");
  const schemaPath = path.resolve(root, cfg.schema ?? "prisma/schema.prisma");
  const location: SchemaLocation = {
    root,
    schemaPath,
    migrationsDir: path.resolve(root, cfg.migrations?.path ?? path.join(path.dirname(schemaPath), "migrations")),
  };
  const filters = { externalTables: cfg.tables?.external ?? [], externalEnums: cfg.enums?.external ?? [] };
  const base = { url, location, filters };

  switch (positionals[0]) {
    case "deploy":
      printApplied(await migrateDeploy(base));
      return;
    case "dev": {
      const r = await migrateDev({ ...base, name: opts.name, createOnly: opts["create-only"] });
      for (const w of r.warnings) console.warn(`⚠ ${w}`);
      if (r.created) console.log(`Created ${path.relative(process.cwd(), r.created)}`);
      else console.log("Already in sync, no schema change was found.");
      printApplied(r.applied);
      return;
    }
    case "status": {
      const r = await migrateStatus(base);
      console.log(JSON.stringify(r, null, 2));
      if (r.history || r.failedMigrationNames.length || r.editedMigrationNames.length) process.exitCode = 1;
      return;
    }
    case "diff": {
      const from = opts["from-empty"] ? "empty" : opts["from-db"] ? "database" : "migrations";
      process.stdout.write(await migrateDiff({ ...base, from }));
      return;
    }
    case "resolve":
      if (!opts.applied === !opts["rolled-back"]) throw new Error("resolve needs one of --applied | --rolled-back");
      await migrateResolve({ ...base, applied: opts.applied, rolledBack: opts["rolled-back"] });
      console.log(`Migration ${opts.applied ?? opts["rolled-back"]} marked as ${opts.applied ? "applied" : "rolled back"}.`);
      return;
    case "reset":
      if (!opts.force) throw new Error("reset drops all data; pass --force");
      printApplied(await migrateReset(base));
      return;
    default:
      throw new Error(usage);
  }
}

main().catch((e: unknown) => {
  console.error(`Error: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
});
