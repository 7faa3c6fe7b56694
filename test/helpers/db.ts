// A fresh PostgreSQL database per test file, with every migration applied, dropped at the end.
// Test runs may share one server concurrently: names are random, nothing shared.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { migrateDeploy } from "../../src/store/migrate/index.js";

/** The server tests use (trust auth). FLEETQ_TEST_PG overrides it. */
export const TEST_PG_URL = process.env.FLEETQ_TEST_PG ?? "postgresql://postgres@127.0.0.1:5432/postgres";

export interface TestDatabase {
  url: string;
  name: string;
  /** Drops the database (terminating leftover connections). */
  drop(): Promise<void>;
}

function urlFor(name: string): string {
  const u = new URL(TEST_PG_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Runs `fn` on a connection of its own to `url` (default: the test server's admin database). */
export async function admin<T>(fn: (c: pg.Client) => Promise<T>, url = TEST_PG_URL): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** The rows of one SQL statement, on a connection of its own: how tests set up or read back
 * what the store's index has no operation or query for. */
export function sql<T extends pg.QueryResultRow = Record<string, unknown>>(
  url: string,
  text: string,
  params: unknown[] = [],
): Promise<T[]> {
  return admin(async (c) => (await c.query<T>(text, params)).rows, url);
}

/** How many rows of `table` match `where` (SQL, with `params` as $1…). */
export async function countRows(url: string, table: string, where = "true", params: unknown[] = []) {
  const [row] = await sql<{ n: number }>(
    url,
    `SELECT count(*)::int AS n FROM ${table} WHERE ${where}`,
    params,
  );
  return row!.n;
}

/** Every row of `table` as JSON, in a fixed order: a refusal's tests compare them before and after. */
export async function tableRows(url: string, table: string): Promise<unknown[]> {
  const rows = await sql<{ r: unknown }>(
    url,
    `SELECT to_jsonb(t) AS r FROM ${table} t ORDER BY to_jsonb(t)::text`,
  );
  return rows.map((row) => row.r);
}

/** A fresh database name and its URL, not created yet (for tests of database creation). */
export function reserveTestDatabase(): TestDatabase {
  const name = `fleetq_t_${randomBytes(6).toString("hex")}`;
  return {
    url: urlFor(name),
    name,
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(() => {}),
  };
}

/** Names the run's migrated template database (set by test/helpers/template-db.ts). */
export const TEMPLATE_ENV = "FLEETQ_TEST_TEMPLATE_DB";

/** A fresh database with every migration applied (a copy of the run's migrated template when
 * there is one: test/helpers/template-db.ts), or empty with `migrate: false`. */
export async function createTestDatabase(opts: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const db = reserveTestDatabase();
  const migrate = opts.migrate ?? true;
  const template = process.env[TEMPLATE_ENV];
  if (migrate && template) {
    await admin((c) => c.query(`CREATE DATABASE "${db.name}" TEMPLATE "${template}"`));
    return db;
  }
  await admin((c) => c.query(`CREATE DATABASE "${db.name}"`));
  if (migrate) await migrateDeploy({ url: db.url });
  return db;
}
