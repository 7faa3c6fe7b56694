// A client of a topology's API replicas, as a CI pipeline or SDK would be: requests go round the
// replicas, and one that cannot reach a replica (refused, reset, 5xx) is tried again on the next
// with backoff — safe for submissions because they carry an idempotency key.
import type { GraphQLResponse } from "../api.js";

export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

const REFUSALS = new Set(["BAD_USER_INPUT", "CONFLICT", "NOT_FOUND", "FORBIDDEN", "UNAUTHENTICATED"]);

export class ApiClient {
  private next = 0;
  /** Requests that had to be sent again (a replica down, a connection cut). */
  retries = 0;

  constructor(
    private readonly urls: () => string[],
    private readonly token: string,
  ) {}

  /** The data of a request that must succeed; GraphQL errors (refusals) are not retried. */
  async ok<T = Record<string, unknown>>(
    query: string,
    variables: Record<string, unknown> = {},
    timeoutMs = 60_000,
  ): Promise<T> {
    const end = Date.now() + timeoutMs;
    for (let attempt = 0; ; attempt++) {
      const urls = this.urls();
      const url = urls[this.next++ % urls.length]!;
      let r: GraphQLResponse<T> | null = null;
      try {
        r = await post<T>(url, this.token, query, variables);
      } catch (err) {
        if (Date.now() > end) throw new Error(`API unreachable: ${(err as Error).message}`);
      }
      if (r && r.status < 500) {
        if (r.data && !r.errors?.length) return r.data;
        const first = r.errors?.[0];
        const error = new ApiError(first?.message ?? `HTTP ${r.status}`, first?.extensions?.code);
        // a refusal stands; anything else (the database away, …) is worth another try
        if (REFUSALS.has(error.code ?? "") || Date.now() > end) throw error;
      } else if (r && Date.now() > end) throw new Error(`API answered ${r.status}`);
      this.retries++;
      await new Promise((res) => setTimeout(res, Math.min(1000, 50 * 2 ** attempt)));
    }
  }

  async setQuota(input: {
    queue: string;
    resource: "GPU" | "CPU" | "MEMORY";
    deserved?: number;
    limit?: number;
    overQuotaWeight?: number;
  }): Promise<void> {
    await this.ok("mutation($i: SetQueueQuotaInput!) { setQueueQuota(input: $i) { name } }", { i: input });
  }
}

async function post<T>(
  url: string,
  token: string,
  query: string,
  variables: Record<string, unknown>,
): Promise<GraphQLResponse<T>> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
    signal: AbortSignal.timeout(30_000),
  });
  if (res.status >= 500) return { status: res.status };
  const body = (await res.json()) as Omit<GraphQLResponse<T>, "status">;
  return { status: res.status, ...body };
}
