// Opening the database: PostgreSQL through @prisma/adapter-pg, or embedded PGlite for
// `DATABASE_URL=pglite:<dir>` (zero-setup demos: one process, one connection, no isolation levels).
import path from "node:path";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { holdClient } from "./client.js";
import { PrismaClient } from "./generated/prisma/client.js";

export type { Prisma } from "./generated/prisma/client.js";
export { PrismaClient };

/** The client inside an interactive transaction. */
export type Tx = Omit<PrismaClient, "$connect" | "$disconnect" | "$on" | "$transaction" | "$extends">;

/** Used when DATABASE_URL is unset: an embedded database in ./.data/pglite. */
export const DEFAULT_DATABASE_URL = "pglite:./.data/pglite";

const MAX_NAMED_STATEMENTS = 500;

/** The pg pool behind a PostgreSQL client: the snapshot reader reads large row sets through it
 * directly, as arrays, without Prisma's per-row objects. PGlite clients have none. */
const pools = new WeakMap<object, pg.Pool>();

export const poolOf = (prisma: PrismaClient | Tx): pg.Pool | undefined => pools.get(prisma);

/** An open database; its Prisma client is the store's own (client.ts). */
export interface Database {
  kind: "postgres" | "pglite";
  url: string;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** Pool size for PostgreSQL (default 10). */
  poolSize?: number;
}

export async function openDatabase(
  url: string = process.env.DATABASE_URL || DEFAULT_DATABASE_URL,
  opts: OpenDatabaseOptions = {},
): Promise<Database> {
  if (url.startsWith("pglite:")) {
    const { PGlite } = await import("@electric-sql/pglite");
    const { PrismaPGlite } = await import("pglite-prisma-adapter");
    const pglite = await PGlite.create(path.resolve(url.slice("pglite:".length)));
    const prisma = new PrismaClient({ adapter: new PrismaPGlite(pglite) });
    const close = async () => {
      await prisma.$disconnect();
      await pglite.close();
    };
    return holdClient({ kind: "pglite", url, close }, prisma);
  }
  const statementNames = new Map<string, string>();
  const pool = new pg.Pool({ connectionString: url, max: opts.poolSize ?? 10 });
  // An idle pooled connection that PostgreSQL cuts (a restart, pg_terminate_backend) says so by
  // an 'error' event on the pool, which ends the process if nobody hears it. Prisma's adapter
  // listens only while the client is connected, and the snapshot reader uses the pool directly,
  // so the pool hears it itself: it drops that connection and opens another when next needed.
  pool.on("error", (err) => console.error(`fleetq: a pooled PostgreSQL connection was lost: ${err.message}`));
  const adapter = new PrismaPg(pool, {
    // Named statements are prepared once per connection and reused: the hot paths (submit,
    // snapshot) repeat a few dozen distinct queries. Past the cap (texts that vary with list
    // lengths), statements stay unnamed: pg's `name: undefined` = the unnamed statement.
    statementNameGenerator: (q) => {
      let name = statementNames.get(q.sql);
      if (!name && statementNames.size < MAX_NAMED_STATEMENTS) {
        name = `fq${statementNames.size}`;
        statementNames.set(q.sql, name);
      }
      return name as string;
    },
  });
  const prisma = new PrismaClient({ adapter });
  pools.set(prisma, pool);
  const close = async () => {
    await prisma.$disconnect();
    if (!pool.ended) await pool.end();
  };
  return holdClient({ kind: "postgres", url, close }, prisma);
}
