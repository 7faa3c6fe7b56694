// Commands that work on the database itself rather than through the API: the bootstrap ADMIN
// token. With the embedded PGlite default the database is one process's: stop `fleetq dev` first.
import {
  createAdminToken,
  type CreatedToken,
  createStore,
  DEFAULT_DATABASE_URL,
  migrateDeploy,
  openDatabase,
} from "../store/index.js";
import { CliError, EXIT } from "./exit-codes.js";
import { redactUrl } from "./redact.js";

export async function createAdminTokenInDatabase(
  url: string | undefined,
  name: string,
): Promise<CreatedToken> {
  const databaseUrl = url || process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  let db: Awaited<ReturnType<typeof openDatabase>>;
  try {
    // Migrations first: this may be the very first command run against a fresh database.
    await migrateDeploy({ url: databaseUrl });
    db = await openDatabase(databaseUrl);
  } catch (e) {
    const hint = databaseUrl.startsWith("pglite:")
      ? " (the embedded database can only be opened by one process: stop `fleetq dev` first, or use its printed admin token)"
      : "";
    throw new CliError(
      `cannot open the database ${redact(databaseUrl)}: ${(e as Error).message}${hint}`,
      EXIT.UNAVAILABLE,
    );
  }
  try {
    return await createAdminToken(createStore(db), name);
  } finally {
    await db.close();
  }
}

/** A URL without its password, for messages (the one helper: redact.ts). */
export const redact = redactUrl;
