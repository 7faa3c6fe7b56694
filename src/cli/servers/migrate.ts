// `fleetq migrate`: the database migrations (prisma/migrations) applied to DATABASE_URL, as
// `npm run db:migrate` does, from the compiled program (the production image has no dev tools).
import { DEFAULT_DATABASE_URL, migrateDeploy } from "../../store/index.js";
import { redact } from "../database-admin.js";
import { print } from "../command-context.js";

export async function runMigrate(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  const applied = await migrateDeploy({ url: databaseUrl });
  print(
    applied.length
      ? `applied ${applied.length} migration(s) to ${redact(databaseUrl)}: ${applied.join(", ")}`
      : `${redact(databaseUrl)} is up to date`,
  );
}
