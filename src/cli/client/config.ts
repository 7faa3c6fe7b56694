// Where the CLI finds the API and its token: flags, then FLEETQ_URL / FLEETQ_TOKEN, then the
// config file (~/.config/fleetq/config.yaml, or $XDG_CONFIG_HOME/fleetq/config.yaml, or
// FLEETQ_CONFIG), then the default URL of a local `fleetq dev`.
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { z } from "zod";
import { CliError } from "../exit-codes.js";

export const DEFAULT_URL = "http://localhost:4000";

export interface ConnectionSettings {
  /** The GraphQL endpoint (…/graphql). */
  url: string;
  token: string | null;
}

const configFileSchema = z
  .object({
    url: z.string().min(1, "url must not be empty").optional(),
    token: z.string().min(1, "token must not be empty").optional(),
  })
  .strict();

export function configFilePath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.FLEETQ_CONFIG) return env.FLEETQ_CONFIG;
  const base = env.XDG_CONFIG_HOME || join(homedir(), ".config");
  return join(base, "fleetq", "config.yaml");
}

function readConfigFile(path: string, explicit: boolean): z.output<typeof configFileSchema> {
  if (!existsSync(path)) {
    if (explicit) throw new CliError(`config file ${path} (FLEETQ_CONFIG) does not exist`);
    return {};
  }
  let raw: unknown;
  try {
    raw = parse(readFileSync(path, "utf8")) ?? {};
  } catch (e) {
    throw new CliError(`config file ${path}: not valid YAML: ${(e as Error).message}`);
  }
  const parsed = configFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.join(".");
    throw new CliError(`config file ${path}: ${field ? `field ${field}: ` : ""}${issue.message}`);
  }
  return parsed.data;
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
  return { url: graphqlEndpoint(url), token };
}
