// Where the CLI finds the API and its token: flags, then FLEETQ_URL / FLEETQ_TOKEN, then the
// config file (~/.config/fleetq/config.yaml, or $XDG_CONFIG_HOME/fleetq/config.yaml, or
// FLEETQ_CONFIG), then the default URL of a local `fleetq dev`. With no token given, the sign-in
// `fleetq login` cached for that API, if any.
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { CliError } from "../exit-codes.js";
import { lazyRequire } from "../lazy.js";
import { SignedInSession } from "../oidc-session.js";
import { cachedTokens } from "../token-cache.js";

const yaml = lazyRequire<typeof import("yaml")>("yaml");

export const DEFAULT_URL = "http://localhost:4000";

export interface ConnectionSettings {
  /** The GraphQL endpoint (…/graphql). */
  url: string;
  token: string | null;
  /** No token given and signed in with `fleetq login`: the cached tokens, refreshed when due. */
  session?: SignedInSession | null;
}

/** The bearer token to send: the one given, else the signed-in session's current one. */
export async function bearerToken(connection: ConnectionSettings): Promise<string | null> {
  return connection.token ?? (connection.session ? await connection.session.accessToken() : null);
}

interface ConfigFile {
  url?: string;
  token?: string;
}

/** The file's fields, checked: only `url` and `token`, non-empty strings. */
function configFields(raw: unknown): ConfigFile | string {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    return "must be a mapping of url and token";
  const out: ConfigFile = {};
  for (const [key, value] of Object.entries(raw)) {
    if (key !== "url" && key !== "token") return `unknown field ${key} (expected url, token)`;
    if (typeof value !== "string") return `field ${key}: must be a string`;
    if (!value) return `field ${key}: ${key} must not be empty`;
    out[key] = value;
  }
  return out;
}

export function configFilePath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.FLEETQ_CONFIG) return env.FLEETQ_CONFIG;
  const base = env.XDG_CONFIG_HOME || join(homedir(), ".config");
  return join(base, "fleetq", "config.yaml");
}

function readConfigFile(path: string, explicit: boolean): ConfigFile {
  if (!existsSync(path)) {
    if (explicit) throw new CliError(`config file ${path} (FLEETQ_CONFIG) does not exist`);
    return {};
  }
  let raw: unknown;
  try {
    raw = yaml().parse(readFileSync(path, "utf8")) ?? {};
  } catch (e) {
    throw new CliError(`config file ${path}: not valid YAML: ${(e as Error).message}`);
  }
  const fields = configFields(raw);
  if (typeof fields === "string") throw new CliError(`config file ${path}: ${fields}`);
  return fields;
}

/** "localhost:4000", "http://host:4000", "http://host:4000/graphql" → "http://host:4000/graphql". */
export function graphqlEndpoint(url: string): string {
  const withScheme = /^[a-z]+:\/\//i.test(url) ? url : `http://${url}`;
  let u: URL;
  try {
    u = new URL(withScheme);
  } catch {
    throw new CliError(`"${url}" is not a URL (expected e.g. http://localhost:4000)`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    throw new CliError(`"${url}": the API URL must be http:// or https://`);
  }
  if (!u.pathname.endsWith("/graphql")) u.pathname = `${u.pathname.replace(/\/+$/, "")}/graphql`;
  return u.toString();
}

export function resolveConnection(
  flags: { url?: string; token?: string },
  env: NodeJS.ProcessEnv = process.env,
): ConnectionSettings {
  const file = readConfigFile(configFilePath(env), Boolean(env.FLEETQ_CONFIG));
  const url = flags.url || env.FLEETQ_URL || file.url || DEFAULT_URL;
  const token = flags.token || env.FLEETQ_TOKEN || file.token || null;
  const endpoint = graphqlEndpoint(url);
  if (token) return { url: endpoint, token };
  const signedIn = cachedTokens(endpoint, env);
  return signedIn
    ? { url: endpoint, token, session: new SignedInSession(endpoint, signedIn, env) }
    : { url: endpoint, token };
}
