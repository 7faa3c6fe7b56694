// A small GraphQL-over-HTTP client (fetch, bearer token). It sorts failures into the two
// kinds the agent acts on: "unavailable" (network, timeout, 5xx, 429: retry later) and
// "rejected" (the API answered and said no: retrying the same call will not help).

export class ApiUnavailableError extends Error {
  override name = "ApiUnavailableError";
}

export class ApiRejectedError extends Error {
  override name = "ApiRejectedError";
  constructor(
    message: string,
    /** extensions.code of the first error, e.g. FORBIDDEN, BAD_USER_INPUT. */
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

interface GraphQLErrorBody {
  message?: string;
  extensions?: { code?: string; field?: string };
}

/** Codes the server uses for its own failures: worth another try. */
const TRANSIENT_CODES = new Set(["INTERNAL_SERVER_ERROR", "SERVICE_UNAVAILABLE"]);

export interface GraphQLClientOptions {
  url: string;
  token: string;
  timeoutMs?: number;
}

export class GraphQLClient {
  constructor(private readonly options: GraphQLClientOptions) {}

  async request<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
    let response: Response;
    try {
      response = await fetch(this.options.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json",
          authorization: `Bearer ${this.options.token}`,
        },
        body: JSON.stringify({ query, variables }),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 15_000),
      });
    } catch (err) {
      throw new ApiUnavailableError(`API ${this.options.url} unreachable: ${describe(err)}`);
    }
    const text = await response.text().catch(() => "");
    if (response.status >= 500 || response.status === 429) {
      throw new ApiUnavailableError(`API answered HTTP ${response.status}: ${text.slice(0, 200)}`);
    }
    let body: { data?: T | null; errors?: GraphQLErrorBody[] };
    try {
      body = JSON.parse(text);
    } catch {
      throw new ApiRejectedError(
        `API answered HTTP ${response.status} without JSON: ${text.slice(0, 200)}`,
        undefined,
      );
    }
    const first = body.errors?.[0];
    if (first) {
      const code = first.extensions?.code;
      const where = first.extensions?.field ? ` (field ${first.extensions.field})` : "";
      const message = `API error ${code ?? "?"}: ${first.message ?? "unknown"}${where}`;
      if (code && TRANSIENT_CODES.has(code)) throw new ApiUnavailableError(message);
      throw new ApiRejectedError(message, code);
    }
    if (!response.ok || body.data == null) {
      throw new ApiRejectedError(`API answered HTTP ${response.status} without data`, undefined);
    }
    return body.data;
  }
}

export function describe(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    return cause instanceof Error ? `${err.message} (${cause.message})` : err.message;
  }
  return String(err);
}
