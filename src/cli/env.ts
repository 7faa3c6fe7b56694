// Reading the environment: numbers and ports with errors that name the variable.
import { CliError } from "./exit-codes.js";

export function numberEnv(name: string, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const v = env[name];
  if (v === undefined || v === "") return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new CliError(`${name} must be a number (got ${JSON.stringify(v)})`);
  return n;
}

export function portOf(value: string | number | undefined, what: string): number | undefined {
  if (value === undefined || value === "") return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new CliError(`${what}: "${value}" is not a port (0-65535)`);
  return n;
}
