// The tokens `fleetq login` obtained, one entry per API (its GraphQL URL), in
// $XDG_CONFIG_HOME/fleetq/tokens.json (else ~/.config/fleetq/): the folder mode 0700, the file
// 0600, rewritten whole through a temporary file and a rename so that a reader never sees half
// of it and a crash never loses the previous tokens.
import {
  chmodSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
  closeSync,
} from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { CliError } from "./exit-codes.js";

export interface CachedTokens {
  issuer: string;
  clientId: string;
  /** Where refreshes and revocations go (from the provider's discovery at login). */
  tokenEndpoint: string;
  revocationEndpoint?: string;
  /** The `audience`/`resource` asked for at login, asked again on refresh. */
  audience?: string;
  accessToken: string;
  refreshToken?: string;
  idToken?: string;
  /** When the access token expires (ms since the epoch); null = the provider did not say. */
  expiresAt: number | null;
}

interface CacheFile {
  version: 1;
  apis: Record<string, CachedTokens>;
}

export function tokenCachePath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME || join(homedir(), ".config");
  return join(base, "fleetq", "tokens.json");
}

function readCache(path: string): CacheFile {
  if (!existsSync(path)) return { version: 1, apis: {} };
  try {
    const raw = JSON.parse(readFileSync(path, "utf8")) as CacheFile;
    if (raw?.version === 1 && raw.apis && typeof raw.apis === "object") return raw;
  } catch {
    // reported below
  }
  throw new CliError(
    `token cache ${path} is not what fleetq writes: delete it and run \`fleetq login\` again`,
  );
}

function writeCache(path: string, cache: CacheFile): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  chmodSync(dirname(path), 0o700);
  const temp = `${path}.${process.pid}.${Date.now()}.tmp`;
  const fd = openSync(temp, "wx", 0o600);
  try {
    writeSync(fd, `${JSON.stringify(cache, null, 2)}\n`);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(temp, path);
  } catch (e) {
    rmSync(temp, { force: true });
    throw e;
  }
}

export function cachedTokens(apiUrl: string, env: NodeJS.ProcessEnv = process.env): CachedTokens | null {
  return readCache(tokenCachePath(env)).apis[apiUrl] ?? null;
}

/** Stores (or with null, forgets) the tokens of `apiUrl`, keeping the other APIs' entries. */
export function saveTokens(
  apiUrl: string,
  tokens: CachedTokens | null,
  env: NodeJS.ProcessEnv = process.env,
): void {
  const path = tokenCachePath(env);
  const cache = readCache(path);
  if (tokens) cache.apis[apiUrl] = tokens;
  else delete cache.apis[apiUrl];
  writeCache(path, cache);
}
