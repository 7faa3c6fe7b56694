// What every API command shares: the global options (--url, --token, --output), the client
// they make, and one way to end: a CliError prints one line on stderr and sets the exit code.
import type { Command } from "commander";
import { ApiClient } from "./client/api-client.js";
import { type ConnectionSettings, resolveConnection } from "./client/config.js";
import { CliError, EXIT, type ExitCode } from "./exit-codes.js";

export interface GlobalOptions {
  url?: string;
  token?: string;
  output?: string;
}

export type OutputFormat = "table" | "json";

export function globalOptions(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals<GlobalOptions>();
}

export function outputFormat(cmd: Command): OutputFormat {
  const o = globalOptions(cmd).output ?? "table";
  if (o !== "table" && o !== "json") throw new CliError(`--output: "${o}" is not one of table, json`);
  return o;
}

export function connectionOf(cmd: Command): ConnectionSettings {
  const g = globalOptions(cmd);
  return resolveConnection({ url: g.url, token: g.token });
}

export function apiClientOf(cmd: Command): ApiClient {
  return new ApiClient(connectionOf(cmd));
}

export const print = (text: string) => void process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
export const printErr = (text: string) => void process.stderr.write(text.endsWith("\n") ? text : `${text}\n`);
export const printJson = (value: unknown) => print(JSON.stringify(value, null, 2));

/** Wraps a command's action: its result is the exit code; errors are reported, not thrown. */
// biome-ignore lint/suspicious/noConfusingVoidType: an action may end without returning an exit code
type ActionResult = ExitCode | undefined | void;

export function action<A extends unknown[]>(
  fn: (...args: A) => Promise<ActionResult> | ActionResult,
): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      const code = await fn(...args);
      process.exitCode = code ?? EXIT.OK;
    } catch (e) {
      if (e instanceof CliError) {
        printErr(`fleetq: ${e.message}`);
        process.exitCode = e.exitCode;
        return;
      }
      printErr(`fleetq: unexpected error: ${(e as Error)?.stack ?? String(e)}`);
      process.exitCode = EXIT.UNAVAILABLE;
    }
  };
}
