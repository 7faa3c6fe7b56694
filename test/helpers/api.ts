// The real API server on a fresh database and a unique Redis prefix, and a small GraphQL client
// over HTTP and WebSocket for tests (and benchmarks) to talk to it.
import { randomBytes } from "node:crypto";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { type ApiServer, type ApiServerOptions, createApiServer } from "../../src/api/server.js";
import { createTestDatabase, type TestDatabase } from "./db.js";
import { TEST_REDIS_URL, testRedisPrefix } from "./redis.js";

export interface GraphQLResponse<T = Record<string, unknown>> {
  status: number;
  data?: T | null;
  errors?: { message: string; extensions?: { code?: string; field?: string } }[];
}

export async function gql<T = Record<string, unknown>>(
  url: string,
  token: string | null,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<GraphQLResponse<T>> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as Omit<GraphQLResponse<T>, "status">;
  return { status: res.status, ...body };
}

/** The data of a response that must have succeeded. */
export async function gqlOk<T = Record<string, unknown>>(
  url: string,
  token: string | null,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<T> {
  const r = await gql<T>(url, token, query, variables);
  if (r.errors?.length || !r.data) throw new Error(`GraphQL errors: ${JSON.stringify(r.errors)}`);
  return r.data;
}

/** Registers `cluster` (as ADMIN) and gives it an AGENT token, "agent-<cluster>": its secret. */
export async function registerClusterWithAgent(
  api: { url: string; adminToken: string },
  cluster = "c1",
): Promise<string> {
  await gqlOk(
    api.url,
    api.adminToken,
    "mutation($c: String!) { registerCluster(input: { name: $c }) { name } }",
    {
      c: cluster,
    },
  );
  const r = await gqlOk<{ createToken: { secret: string } }>(
    api.url,
    api.adminToken,
    "mutation($n: String!, $c: String!) { createToken(input: { name: $n, role: AGENT, cluster: $c }) { secret } }",
    { n: `agent-${cluster}`, c: cluster },
  );
  return r.createToken.secret;
}

/** An agent's complete report of `cluster`'s nodes (NodeReport inputs); how many were stored. */
export async function reportNodes(
  api: { url: string },
  agentToken: string,
  cluster: string,
  nodes: Record<string, unknown>[],
): Promise<number> {
  const r = await gqlOk<{ reportNodes: number }>(
    api.url,
    agentToken,
    "mutation($c: String!, $n: [NodeReport!]!) { reportNodes(cluster: $c, nodes: $n, complete: true) }",
    { c: cluster, n: nodes },
  );
  return r.reportNodes;
}

export function wsClient(url: string, token: string | null): Client {
  return createClient({
    url: url.replace(/^http/, "ws"),
    webSocketImpl: WebSocket,
    connectionParams: token ? { authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
  });
}

export interface TestApi {
  server: ApiServer;
  url: string;
  adminToken: string;
  db: TestDatabase;
  redisPrefix: string;
  /** Another replica: same database and Redis prefix, its own port. */
  replica(): Promise<ApiServer>;
  close(): Promise<void>;
}

/** `extra`: more server options (e.g. rateLimits), for the server and its replicas. */
export async function startTestApi(extra: Partial<ApiServerOptions> = {}): Promise<TestApi> {
  const db = await createTestDatabase();
  const redisPrefix = testRedisPrefix();
  const adminToken = `fq_test_${randomBytes(16).toString("hex")}`;
  const options = {
    databaseUrl: db.url,
    redisUrl: TEST_REDIS_URL,
    redisPrefix,
    port: 0,
    host: "127.0.0.1",
    adminToken,
    ...extra,
  };
  const server = await createApiServer(options);
  const replicas: ApiServer[] = [];
  return {
    server,
    url: server.url,
    adminToken,
    db,
    redisPrefix,
    replica: async () => {
      const r = await createApiServer(options);
      replicas.push(r);
      return r;
    },
    close: async () => {
      await Promise.allSettled([server.close(), ...replicas.map((r) => r.close())]);
      await db.drop();
    },
  };
}
