// "--timeout 30m": a positive duration (the core's syntax: 90s, 30m, 1h30m, 2h, or plain seconds)
// in milliseconds, refused with the flag named.
// The core's module itself, not its index, which would load the whole core at every start.
import { parseDurationSeconds } from "../core/util/duration.js";
import { CliError } from "./exit-codes.js";

export function parseDuration(text: string, what = "duration"): number {
  let seconds = Number.NaN;
  try {
    seconds = parseDurationSeconds(text, what);
  } catch {
    // refused below, with the examples
  }
  if (!(seconds > 0)) {
    throw new CliError(`${what}: "${text}" is not a duration (examples: 90s, 30m, 1h30m, 2h)`);
  }
  return Math.round(seconds * 1000);
}
