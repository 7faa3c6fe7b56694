// The migrations apply with the one documented command on a fresh database (offline: Wasm
// schema engine), are recorded the way the Prisma CLI records them, and re-running is a no-op.
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { createQueue, createStore, listQueues, openDatabase } from "../../src/store/index.js";
import { migrateDeploy, migrateStatus } from "../../src/store/migrate/index.js";
import { reserveTestDatabase, type TestDatabase } from "../helpers/db.js";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "../..");
const migrationNames = fs
  .readdirSync(path.join(root, "prisma/migrations"), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();

describe("npm run db:migrate", () => {
  let db: TestDatabase | undefined;
  afterAll(async () => db?.drop());

  it("creates the database and applies every migration, then finds nothing to do", async () => {
    db = reserveTestDatabase(); // not created: the command must create a missing database itself
    const env = { ...process.env, DATABASE_URL: db.url };
    const first = await run("npm", ["run", "-s", "db:migrate"], { cwd: root, env });
    expect(first.stdout).toContain(`Applied ${migrationNames.length} migration(s)`);

    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const applied = await client.query(
        "SELECT migration_name, finished_at IS NOT NULL AS done, checksum FROM _prisma_migrations ORDER BY migration_name",
      );
      expect(applied.rows.map((r) => r.migration_name)).toEqual(migrationNames);
      expect(applied.rows.every((r) => r.done)).toBe(true);
      const tables = await client.query(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
      );
      expect(tables.rows.map((r) => r.tablename)).toEqual(
        expect.arrayContaining([
          "api_token",
          "bind_request",
          "cluster",
          "event",
          "job",
          "job_task",
          "node",
          "pod",
          "queue",
          "queue_quota",
          "queue_usage",
        ]),
      );
    } finally {
      await client.end();
    }

    const second = await run("npm", ["run", "-s", "db:migrate"], { cwd: root, env });
    expect(second.stdout).toContain("No pending migrations to apply.");
    const status = await migrateStatus({ url: db.url });
    expect(status.history).toBeNull();
    expect(status.failedMigrationNames).toEqual([]);
  });
});

describe("embedded PGlite (DATABASE_URL=pglite:<dir>)", () => {
  it("takes the same migrations and serves the store's client", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fleetq-pglite-"));
    try {
      const url = `pglite:${dir}`;
      expect(await migrateDeploy({ url })).toEqual(migrationNames);
      const db = await openDatabase(url);
      try {
        expect(db.kind).toBe("pglite");
        const store = createStore(db);
        await createQueue(store, { name: "test-admin" }, { name: "root" });
        expect((await listQueues(store)).map((q) => q.name)).toEqual(["root"]);
      } finally {
        await db.close();
      }
      expect(await migrateDeploy({ url })).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("npm run db:migrate:dev -- <name>", () => {
  let db: TestDatabase | undefined;
  afterAll(async () => db?.drop());

  it("writes the migration from the migrations folder to the schema, applies it, then is in sync", async () => {
    // A scratch copy of prisma/ with one more column, so the project's own folder stays untouched.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fleetq-migrate-dev-"));
    try {
      fs.cpSync(path.join(root, "prisma"), path.join(dir, "prisma"), { recursive: true });
      const schemaFile = path.join(dir, "prisma/schema.prisma");
      const schema = fs.readFileSync(schemaFile, "utf8");
      fs.writeFileSync(
        schemaFile,
        schema.replace(
          "  ready         Boolean  @default(true)\n",
          "  ready         Boolean  @default(true)\n  rack          String?\n",
        ),
      );
      fs.writeFileSync(
        path.join(dir, "prisma.config.ts"),
        'export default { schema: "prisma/schema.prisma", migrations: { path: "prisma/migrations" } };\n',
      );
      db = reserveTestDatabase();
      const env = { ...process.env, DATABASE_URL: db.url };
      const config = ["--config", path.join(dir, "prisma.config.ts")];
      const dev = await run("npm", ["run", "-s", "db:migrate:dev", "--", "node_rack", ...config], {
        cwd: root,
        env,
      });
      const created = fs
        .readdirSync(path.join(dir, "prisma/migrations"))
        .filter((name) => name.endsWith("_node_rack"));
      expect(created).toHaveLength(1);
      expect(dev.stdout).toContain(`Applied ${migrationNames.length + 1} migration(s)`);
      const sql = fs.readFileSync(path.join(dir, "prisma/migrations", created[0]!, "migration.sql"), "utf8");
      expect(sql).toContain('ALTER TABLE "node" ADD COLUMN     "rack" TEXT;');

      const again = await run("npm", ["run", "-s", "db:migrate:dev", "--", "nothing", ...config], {
        cwd: root,
        env,
      });
      expect(again.stdout).toContain("Already in sync");
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        const column = await client.query(
          "SELECT 1 FROM information_schema.columns WHERE table_name = 'node' AND column_name = 'rack'",
        );
        expect(column.rowCount).toBe(1);
      } finally {
        await client.end();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
