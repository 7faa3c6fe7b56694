// GraphQL over HTTP for the CLI. Failures become CliErrors whose exit code says whether a retry
// can help: the API refused (REJECTED: bad input, permission, not found, conflict) or could not
// answer (UNAVAILABLE: network, timeout, 5xx, internal error).
import { CliError, EXIT } from "../exit-codes.js";
import type { ConnectionSettings } from "./config.js";

/** The API answered with an error: its extensions.code and field path, when given. */
export class ApiError extends CliError {
  override name = "ApiError";
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
  UNAUTHENTICATED: " (set FLEETQ_TOKEN or `token:` in the config file; see `fleetq --help`)",
};

interface ErrorBody {
  message?: string;
  extensions?: { code?: string; field?: string };
}

export class ApiClient {
  constructor(
    readonly connection: ConnectionSettings,
    private readonly timeoutMs = 30_000,
  ) {}

  get url(): string {
    return this.connection.url;
  }

  async request<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
    const { url, token } = this.connection;
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
      const code = first.extensions?.code;
      const field = first.extensions?.field;
      const refused = code !== undefined && REFUSALS.has(code);
      throw new ApiError(
        `${first.message ?? "unknown error"}${code ? ` [${code}]` : ""}${code ? (HINTS[code] ?? "") : ""}`,
        code,
        field,
        refused ? EXIT.REJECTED : EXIT.UNAVAILABLE,
      );
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
