// One place that keeps secrets out of logs and messages: a URL's password (Redis, PostgreSQL,
// wherever a URL is written, whole or inside a message) and fields known to hold secrets.

const CENSOR = "***";

/** Fields whose value is a secret wherever they appear in a log line (pino `redact` paths). */
export const SECRET_LOG_PATHS = [
  "password",
  "token",
  "secret",
  "authorization",
  "*.password",
  "*.token",
  "*.secret",
  "*.authorization",
  "headers.authorization",
  "req.headers.authorization",
];

/** A URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (!u.password) return url;
    u.password = CENSOR;
    return u.toString();
  } catch {
    return redactText(url);
  }
}

// scheme://[user]:password@ — the password ends at the last "@" before the host.
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]*):[^\s/]*@/gi;

/** Text with the password of every URL in it replaced. */
export function redactText(text: string): string {
  return text.replace(URL_PASSWORD, `$1:${CENSOR}@`);
}

/** A log line's fields with URL passwords in their strings replaced (nested, arrays included). */
export function redactFields<T>(value: T, depth = 0): T {
  if (typeof value === "string") return redactText(value) as T;
  if (depth > 6 || value === null || typeof value !== "object") return value;
  if (value instanceof Error)
    return {
      type: value.name,
      message: redactText(value.message),
      stack: redactText(value.stack ?? ""),
    } as T;
  if (Array.isArray(value)) return value.map((v) => redactFields(v, depth + 1)) as T;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) out[key] = redactFields(v, depth + 1);
  return out as T;
}
