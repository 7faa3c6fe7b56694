// GraphQL over HTTP for the CLI. Failures become CliErrors whose exit code says whether a retry
// can help: the API refused (REJECTED: bad input, permission, not found, conflict) or could not
// answer (UNAVAILABLE: network, timeout, 5xx, internal error). An operation refused by the
// token's budget (RATE_LIMITED, which runs nothing) is sent again after the Retry-After the API
// gives, as long as the waits stay within MAX_RATE_LIMIT_WAIT_MS in all.
import { CliError, EXIT } from "../exit-codes.js";
import { bearerToken, type ConnectionSettings } from "./config.js";

/** The API answered with an error: its extensions.code and field path, when given. */
export class ApiError extends CliError {
  override name = "ApiError";
  /** RATE_LIMITED: when to send the operation again (the API's retryAfter). */
  retryAfterMs: number | undefined;
  constructor(
    message: string,
    readonly code: string | undefined,
    readonly field: string | undefined,
    exitCode: typeof EXIT.REJECTED | typeof EXIT.UNAVAILABLE,
  ) {
    super(message, exitCode);
  }
}

const REFUSALS = new Set(["UNAUTHENTICATED", "FORBIDDEN", "BAD_USER_INPUT", "NOT_FOUND", "CONFLICT"]);
const HINTS: Record<string, string> = {
  UNAUTHENTICATED:
    " (run `fleetq login`, or set FLEETQ_TOKEN or `token:` in the config file; see `fleetq --help`)",
};

export interface ErrorBody {
  message?: string;
  extensions?: { code?: string; field?: string; retryAfter?: number };
}

/** A GraphQL error of the API (HTTP or subscription) as the error the CLI exits with. */
export function apiErrorOf(first: ErrorBody): ApiError {
  const code = first.extensions?.code;
  const refused = code !== undefined && REFUSALS.has(code);
  return new ApiError(
    `${first.message ?? "unknown error"}${code ? ` [${code}]` : ""}${code ? (HINTS[code] ?? "") : ""}`,
    code,
    first.extensions?.field,
    refused ? EXIT.REJECTED : EXIT.UNAVAILABLE,
  );
}

/** How long one request may wait in all for the token's budget before giving up (UNAVAILABLE). */
export const MAX_RATE_LIMIT_WAIT_MS = 60_000;

export class ApiClient {
  constructor(
    readonly connection: ConnectionSettings,
    private readonly timeoutMs = 30_000,
  ) {}

  get url(): string {
    return this.connection.url;
  }

  async request<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
    let waited = 0;
    let renewed = false;
    for (;;) {
      try {
        return await this.send<T>(query, variables);
      } catch (e) {
        if (!renewed && (await this.renewedAfter(e))) {
          renewed = true;
          continue;
        }
        const wait = e instanceof ApiError && e.code === "RATE_LIMITED" ? e.retryAfterMs : undefined;
        if (wait === undefined || waited + wait > MAX_RATE_LIMIT_WAIT_MS) throw e;
        waited += wait;
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  /** Refused as UNAUTHENTICATED while signed in: whether the session got a new access token. */
  private async renewedAfter(e: unknown): Promise<boolean> {
    const session = this.connection.session;
    if (!session || !(e instanceof ApiError) || e.code !== "UNAUTHENTICATED") return false;
    return (await session.refreshed()) !== null;
  }

  private async send<T>(query: string, variables: Record<string, unknown>): Promise<T> {
    const { url } = this.connection;
    const token = await bearerToken(this.connection);
    let res: Response;
    try {
      res = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json",
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify({ query, variables }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (e) {
      const cause = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message;
      throw new CliError(`cannot reach the fleetq API at ${url}: ${cause}`, EXIT.UNAVAILABLE);
    }
    const text = await res.text().catch(() => "");
    let body: { data?: T | null; errors?: ErrorBody[] } | undefined;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const first = body?.errors?.[0];
    if (first) {
      const error = apiErrorOf(first);
      const code = error.code;
      if (code === "RATE_LIMITED") {
        const seconds = Number(first.extensions?.retryAfter ?? res.headers.get("retry-after") ?? 1);
        error.retryAfterMs = Math.max(1, Number.isFinite(seconds) ? seconds : 1) * 1000;
      }
      throw error;
    }
    if (!res.ok || !body || body.data == null) {
      throw new CliError(
        `the fleetq API at ${url} answered HTTP ${res.status}: ${text.slice(0, 200) || "(empty)"}`,
        res.status >= 500 || res.status === 429 ? EXIT.UNAVAILABLE : EXIT.REJECTED,
      );
    }
    return body.data;
  }
}
