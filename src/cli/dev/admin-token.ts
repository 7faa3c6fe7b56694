// The ADMIN token of `fleetq dev`: FLEETQ_ADMIN_TOKEN if set, else the one saved in the state
// folder, else a new one — made a token in the database if it is not one yet.
import { randomBytes } from "node:crypto";
import { authenticate, ensureAdminToken, type Store } from "../../store/index.js";
import type { TokenFiles } from "../demo/token-files.js";
import { CliError } from "../exit-codes.js";

const FILE = "admin";

export async function devAdminToken(
  store: Store,
  files: TokenFiles,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  const given = env.FLEETQ_ADMIN_TOKEN;
  if (given) {
    await ensureAdminToken(store, given);
    const who = await authenticate(store, given);
    if (who?.role !== "ADMIN")
      throw new CliError("FLEETQ_ADMIN_TOKEN is a revoked or non-ADMIN token; unset it or pick another");
    return given;
  }
  const saved = files.read(FILE);
  if (saved) {
    await ensureAdminToken(store, saved, "dev-admin");
    if ((await authenticate(store, saved))?.role === "ADMIN") return saved;
  }
  const secret = `fq_dev_${randomBytes(24).toString("base64url")}`;
  await ensureAdminToken(store, secret, "dev-admin");
  files.write(FILE, secret);
  return secret;
}
