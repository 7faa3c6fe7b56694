// The driver adapter the schema engine runs migrations through, for PostgreSQL servers.
// @prisma/adapter-pg 7.10 needs three corrections when driven by the schema engine
// (PrismaClient needs none of them):
//  1. catalog queries return the internal "char" type (OID 18), which the adapter cannot
//     deserialize: report those columns as text (OID 25);
//  2. connectToShadowDb() creates a temporary database but connects to the MAIN one (pg lets the
//     connection string override `database`): build the shadow URL ourselves and verify it;
//  3. executeScript() splits on ";" across pooled connections (breaks $$ bodies, non-atomic):
//     send each script as ONE simple-protocol query, an implicit transaction like the native engine.
import { randomUUID } from "node:crypto";
import { PrismaPg } from "@prisma/adapter-pg";
import type { SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import pg from "pg";

const PG_CHAR_OID = 18;
const PG_TEXT_OID = 25;

type QueryResultLike = { fields?: { dataTypeID: number }[] };

function charColumnsAsText<T>(result: T): T {
  for (const r of (Array.isArray(result) ? result : [result]) as QueryResultLike[]) {
    for (const f of r?.fields ?? []) if (f.dataTypeID === PG_CHAR_OID) f.dataTypeID = PG_TEXT_OID;
  }
  return result;
}

class CharAsTextClient extends pg.Client {
  // biome-ignore lint/suspicious/noExplicitAny: pg's query() has a dozen overloads; we only post-process
  override query(...args: any[]): any {
    const cb = args.findLastIndex((a) => typeof a === "function");
    if (cb >= 0) {
      const done = args[cb] as (err: Error | null, res: unknown) => void;
      args[cb] = (err: Error | null, res: unknown) => done(err, err ? res : charColumnsAsText(res));
    }
    // biome-ignore lint/suspicious/noExplicitAny: see above
    const ret = (super.query as any)(...args);
    return ret && typeof ret.then === "function" ? ret.then(charColumnsAsText) : ret;
  }
}

type PgAdapter = Awaited<ReturnType<PrismaPg["connect"]>>;

function wholeScripts(adapter: PgAdapter): PgAdapter {
  adapter.executeScript = async (script: string) => {
    try {
      await adapter.underlyingDriver().query(script);
    } catch (e) {
      (adapter as unknown as { onError(e: unknown): never }).onError(e);
    }
  };
  return adapter;
}

/** An adapter factory for `url`; every adapter it hands out is recorded in `opened` for disposal. */
export function pgMigrationAdapter(
  url: string,
  opened: { dispose(): Promise<void> }[],
): SqlMigrationAwareDriverAdapterFactory {
  const make = (u: string) => new PrismaPg({ connectionString: u, Client: CharAsTextClient });
  const main = make(url);
  return {
    provider: main.provider,
    adapterName: main.adapterName,
    async connect() {
      const adapter = wholeScripts(await main.connect());
      opened.push(adapter);
      return adapter;
    },
    async connectToShadowDb() {
      const admin = await main.connect();
      const name = `prisma_migrate_shadow_db_${randomUUID()}`;
      await admin.executeScript(`CREATE DATABASE "${name}"`);
      const shadowUrl = new URL(url);
      shadowUrl.pathname = `/${name}`;
      const shadow = wholeScripts(await make(shadowUrl.toString()).connect());
      const probe = await shadow.queryRaw({ sql: "SELECT current_database()::text", args: [], argTypes: [] });
      const reached = probe.rows[0]?.[0];
      if (reached !== name) throw new Error(`shadow connection reached ${String(reached)}, expected ${name}`);
      const closeShadow = shadow.dispose.bind(shadow);
      shadow.dispose = async () => {
        await closeShadow();
        await admin.executeScript(`DROP DATABASE IF EXISTS "${name}"`);
        await admin.dispose();
      };
      return shadow;
    },
  };
}

/** `prisma migrate deploy/dev` create a missing database; the Wasm engine cannot, so we do. */
export async function ensurePostgresDatabase(url: string): Promise<boolean> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1)) || "postgres";
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (rowCount) return false;
    try {
      await client.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
      return true;
    } catch (e) {
      // Lost a creation race with another migrator: the database exists, which is all we need.
      if (["42P04", "23505"].includes((e as { code?: string }).code ?? "")) return false;
      throw e;
    }
  } finally {
    await client.end();
  }
}
