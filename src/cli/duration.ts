// "--timeout 30m": durations as Go and kubectl write them (90s, 30m, 1h30m, 2h) or plain seconds.
import { CliError } from "./exit-codes.js";

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/y;

export function parseDuration(text: string, what = "duration"): number {
  const s = text.trim();
  if (/^\d+(\.\d+)?$/.test(s)) return Number(s) * 1000;
  let ms = 0;
  PART.lastIndex = 0;
  let matched = 0;
  for (let m = PART.exec(s); m; m = PART.exec(s)) {
    ms += Number(m[1]) * UNIT_MS[m[2]!]!;
    matched = PART.lastIndex;
  }
  if (!s || matched !== s.length || ms <= 0) {
    throw new CliError(`${what}: "${text}" is not a duration (examples: 90s, 30m, 1h30m, 2h)`);
  }
  return ms;
}
