// The migration adapter for embedded PGlite ("pglite:<dir>" URLs).
// pglite-prisma-adapter 0.7.2's executeScript() does not await PGlite.exec(), so a failing
// migration would be recorded as applied: we await it ourselves.
import fs from "node:fs";
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";

export async function pgliteMigrationAdapter(
  dir: string,
  opened: { dispose(): Promise<void> }[],
): Promise<SqlMigrationAwareDriverAdapterFactory> {
  const { PGlite } = await import("@electric-sql/pglite");
  const { PrismaPGlite } = await import("pglite-prisma-adapter");
  fs.mkdirSync(dir, { recursive: true });
  const db = await PGlite.create(dir);
  opened.push({ dispose: () => db.close() });
  const factory = new PrismaPGlite(db);
  const awaitScripts = (adapter: SqlDriverAdapter): SqlDriverAdapter => {
    adapter.executeScript = async (sql: string) => {
      try {
        await db.exec(sql);
      } catch (e) {
        (adapter as unknown as { onError(e: unknown): never }).onError(e);
      }
    };
    return adapter;
  };
  return {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => awaitScripts(await factory.connect()),
    connectToShadowDb: async () => awaitScripts(await factory.connectToShadowDb()),
  };
}
