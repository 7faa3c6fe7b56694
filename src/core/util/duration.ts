// Go-style durations ("90s", "1h30m", "250ms", and days: "2d") to seconds; a bare number is
// seconds. The one duration syntax of fleetq: scheduler configuration, scenarios and the CLI.
const UNITS: Record<string, number> = {
  ns: 1e-9,
  us: 1e-6,
  µs: 1e-6,
  ms: 1e-3,
  s: 1,
  m: 60,
  h: 3600,
  d: 86_400,
};

export function parseDurationSeconds(v: unknown, what: string): number {
  if (typeof v === "number" && Number.isFinite(v)) return v;
  if (typeof v !== "string") throw new Error(`${what}: must be a duration like "30s" or "5m"`);
  const s = v.trim();
  if (/^-?\d+(\.\d+)?$/.test(s)) return Number(s);
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h|d)/gy;
  let total = 0;
  let sign = 1;
  let rest = s;
  if (rest.startsWith("-")) {
    sign = -1;
    rest = rest.slice(1);
  }
  re.lastIndex = 0;
  let pos = 0;
  for (let m = re.exec(rest); m; m = re.exec(rest)) {
    total += Number(m[1]) * UNITS[m[2]!]!;
    pos = re.lastIndex;
  }
  if (pos !== rest.length || rest.length === 0)
    throw new Error(`${what}: ${JSON.stringify(v)} is not a duration like "30s" or "5m"`);
  return sign * total;
}
