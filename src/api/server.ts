// The API server: Apollo Server 5 on Express 5, GraphQL at /graphql over HTTP, subscriptions over
// graphql-ws on the same port and path, /healthz and /readyz. Constructible from code, so tests,
// `fleetq serve` and `fleetq dev` run it in-process.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { ApolloServer } from "@apollo/server";
import { ApolloServerPluginDrainHttpServer } from "@apollo/server/plugin/drainHttpServer";
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginLandingPageDisabled,
} from "@apollo/server/plugin/disabled";
import { expressMiddleware } from "@as-integrations/express5";
import express from "express";
import { type ExecutionArgs, type ExecutionResult, execute, GraphQLError, parse, subscribe } from "graphql";
import { useServer } from "graphql-ws/use/ws";
import { type WebSocket, WebSocketServer } from "ws";
import type { Registry } from "prom-client";
import type { SchedulerConfig } from "../core/index.js";
import {
  createStore,
  ensureAdminToken,
  openDatabase,
  type Principal,
  RedisEventBus,
  type Store,
  type UsageWindow,
  withEvents,
} from "../store/index.js";
import { armoredValidate, armorProtection, costLimitPlugin, QUERY_LIMITS } from "./armor.js";
import { checkedCost } from "./query-cost.js";
import {
  DEFAULT_RATE_LIMITS,
  HEAVY_OPERATION_COST,
  HELD_ANSWER_DELAY_MS,
  RATE_LIMITED,
  RateLimiter,
  type RateLimits,
  type Refusal,
  rateLimited,
  refusalMessage,
} from "./rate-limit.js";
import { type ApiContext, bearerSecret, createContext } from "./context.js";
import { clientError, debugErrors, internalError } from "./errors.js";
import { FairShareCache } from "./fair-share-cache.js";
import { DryRuns } from "./dry-runs.js";
import { FleetSizeCache } from "./fleet-size.js";
import { healthz, readyz } from "./health.js";
import { type AuthRefusal, PrincipalCache } from "./principal-cache.js";
import { buildSchema } from "./schema.js";
import { mountDashboard } from "../dashboard/mount-dashboard.js";
import { mountAuthRoutes } from "./identity/auth-routes.js";
import { type OidcConfig, oidcConfigFromEnv } from "./identity/oidc-config.js";
import { OidcVerifier, type VerifierOptions } from "./identity/verifier.js";
import {
  AuthFailureLimiter,
  type AuthFailureLimit,
  authenticateBearer,
  clientAddress,
  DEFAULT_AUTH_FAILURE_LIMIT,
  trustedProxies,
} from "./auth-failures.js";
import { mountMetrics } from "../metrics/mount-metrics.js";
import { countingCommitted } from "../metrics/transition-metrics.js";
import { DEFAULT_REDIS_URL } from "../protocol/defaults.js";
import { BIND_QUEUE_PREFIX, defaultBindSecret } from "../protocol/bind-request.js";
import { AgentLogs } from "./agent-logs.js";

export interface ApiServerOptions {
  /** postgresql://… or pglite:<dir>; default DATABASE_URL, else the embedded default. Ignored with `store`. */
  databaseUrl?: string;
  /** An open store to use (its database stays the caller's to close). */
  store?: Store;
  /** Default REDIS_URL, else DEFAULT_REDIS_URL. */
  redisUrl?: string;
  /** Namespace of the event channel (default "fleetq:"): replicas of one deployment share it. */
  redisPrefix?: string;
  /** Default FLEETQ_PORT, else 4000; 0 = any free port. */
  port?: number;
  host?: string;
  /** Made an ADMIN token at start if no token has this secret yet (default FLEETQ_ADMIN_TOKEN). */
  adminToken?: string;
  schedulerConfig?: SchedulerConfig;
  /** Time-based fair share, as the workers run it: fairShare then decays usage the same way. */
  usageWindow?: UsageWindow | null;
  /** Prometheus registries of other parts of this process (the workers' in `fleetq dev`),
   * served at /metrics with the API's own. */
  metricsRegistries?: readonly Registry[];
  /** Per-token cost buckets and operations in flight (default DEFAULT_RATE_LIMITS; per process). */
  rateLimits?: RateLimits;
  /** Key prefix of the clusters' bind queues, which their agents' request lists share (default
   * "bind", as the workers'). */
  agentQueuePrefix?: string;
  /** The secret BindRequests are signed with, the workers' too (default FLEETQ_BIND_SECRET, else
   * one of this process's own: API and workers in one process). */
  bindSecret?: string;
  /** Sign-in with an identity provider (default from FLEETQ_OIDC_*; null = static tokens only). */
  oidc?: OidcConfig | null;
  /** How the provider's keys are fetched and its tokens' times checked. */
  oidcVerifier?: VerifierOptions;
  /** Failed authentications per client address (default DEFAULT_AUTH_FAILURE_LIMIT). */
  authFailureLimit?: AuthFailureLimit;
  /** Proxies whose X-Forwarded-For names the client for that limit: addresses and CIDR ranges,
   * comma-separated (default FLEETQ_TRUSTED_PROXIES; none). */
  trustedProxies?: string;
}

/** Largest WebSocket message (a subscribe carries one query; the HTTP body limit is 4 MiB). */
export const WS_MAX_PAYLOAD = 1024 * 1024;
export const WS_MAX_SUBSCRIPTIONS = 50;
/** The close code of a connection refused because its token has its most connections open. */
export const WS_TOO_MANY_CONNECTIONS = 4029;

interface WsConnection {
  secret: string;
  principal: Principal;
  socket: WebSocket;
  /** Gives the token's connection back. */
  release: () => void;
}

/** A subscription's event stream, which keeps `release` (its place among the token's operations in
 * flight) until it ends: completed by the client, closed with its socket, or run out. A refusal
 * (an ExecutionResult) gives the place back at once. */
function heldWhileOpen<R>(result: R, release: () => void): R {
  const source = result as Partial<AsyncIterableIterator<unknown>>;
  if (typeof source?.[Symbol.asyncIterator] !== "function") {
    release();
    return result;
  }
  const it = source[Symbol.asyncIterator]!();
  const ended = <T>(r: T) => {
    release();
    return r;
  };
  const wrapped: AsyncIterableIterator<unknown> = {
    next: async () => {
      const r = await it.next().catch((e: unknown) => {
        release();
        throw e;
      });
      return r.done ? ended(r) : r;
    },
    return: async (value?: unknown) =>
      ended(it.return ? await it.return(value) : { done: true as const, value: undefined }),
    throw: async (e?: unknown) => {
      release();
      if (it.throw) return it.throw(e);
      throw e;
    },
    [Symbol.asyncIterator]: () => wrapped,
  };
  return wrapped as R;
}

export interface ApiServer {
  /** http://host:port/graphql (ws:// for subscriptions: same host, port and path). */
  url: string;
  port: number;
  store: Store;
  close(): Promise<void>;
}

export async function createApiServer(opts: ApiServerOptions = {}): Promise<ApiServer> {
  const schema = buildSchema();
  const debug = debugErrors();
  const db = opts.store ? null : await openDatabase(opts.databaseUrl);
  const redisUrl = opts.redisUrl ?? process.env.REDIS_URL ?? DEFAULT_REDIS_URL;
  const bus = new RedisEventBus(redisUrl, opts.redisPrefix ?? "fleetq:");
  const sink = countingCommitted(bus);
  const store = opts.store ? withEvents(opts.store, sink) : createStore(db!, sink);
  const adminToken = opts.adminToken ?? process.env.FLEETQ_ADMIN_TOKEN;
  if (adminToken) await ensureAdminToken(store, adminToken);
  const oidc = opts.oidc === undefined ? oidcConfigFromEnv() : opts.oidc;

  const principals = new PrincipalCache(store, oidc ? new OidcVerifier(oidc, opts.oidcVerifier) : null);
  const authFailures = new AuthFailureLimiter(opts.authFailureLimit ?? DEFAULT_AUTH_FAILURE_LIMIT);
  const proxies = trustedProxies(opts.trustedProxies ?? process.env.FLEETQ_TRUSTED_PROXIES);
  const fleet = new FleetSizeCache(store);
  await fleet.refresh();
  const deps = {
    store,
    bus,
    principals,
    schedulerConfig: opts.schedulerConfig,
    usageWindow: opts.usageWindow,
    fairShares: new FairShareCache(store, opts.schedulerConfig, opts.usageWindow),
    dryRuns: new DryRuns(store, opts.schedulerConfig, opts.usageWindow),
    logs: new AgentLogs(redisUrl, opts.agentQueuePrefix ?? BIND_QUEUE_PREFIX),
    bindSecret: opts.bindSecret ?? defaultBindSecret(),
  };
  // Not awaited: the server starts (and /readyz reports) even while Redis is unreachable. The
  // subscription fails only when the server closes before Redis ever answered.
  bus
    .listen((e) => {
      // A new token or binding may turn a refusal remembered a moment ago into a principal.
      if (e.kind === "token.created" || e.kind === "rolebinding.created") principals.clear();
      if (e.kind === "token.revoked" || e.kind === "cluster.deleted" || e.kind === "rolebinding.deleted") {
        principals.clear();
        void recheckConnections().catch(() => {});
      }
    })
    .catch(() => {});
  const principalFor = async (header: unknown): Promise<Principal | null> => {
    const secret = bearerSecret(header);
    return secret ? principals.principalFor(secret) : null;
  };

  const app = express();
  // No ETag (a hash of every GraphQL response, useless for POSTs) and no X-Powered-By.
  app.set("etag", false);
  app.disable("x-powered-by");
  const httpServer = http.createServer(app);
  // Longer than the usual idle timeouts of clients and load balancers (60 s): a connection the
  // server drops while a client reuses it fails a request with ECONNRESET.
  httpServer.keepAliveTimeout = 65_000;
  httpServer.headersTimeout = 66_000;
  const wsServer = new WebSocketServer({ server: httpServer, path: "/graphql", maxPayload: WS_MAX_PAYLOAD });
  const armor = armorProtection();
  const connections = new Map<object, WsConnection>();
  // A revoked token (or deleted cluster) closes the sockets it opened, not just later requests.
  const recheckConnections = async () => {
    for (const [ctx, c] of connections) {
      if (!(await principals.principalFor(c.secret))) {
        connections.delete(ctx);
        c.release();
        c.socket.close(4403, "Forbidden: the token is no longer valid");
      }
    }
  };
  const limiter = new RateLimiter(opts.rateLimits ?? DEFAULT_RATE_LIMITS);
  // Over WebSocket: the cost limit, the token's bucket, the token's operations in flight (a
  // subscription counted for as long as it is open) and its heavy queries and mutations one at a
  // time.
  const limited =
    <R>(run: (args: ExecutionArgs) => R, subscription: boolean) =>
    (args: ExecutionArgs): R | ExecutionResult | Promise<Awaited<R>> => {
      const { cost, refusal } = checkedCost(
        schema,
        args.document,
        args.operationName,
        args.variableValues,
        fleet.current(),
      );
      if (refusal) return { errors: [refusal] };
      const principal = (args.contextValue as ApiContext).principal;
      if (!principal) return run(args);
      const release = limiter.held(principal) ?? limiter.enter(principal);
      if (typeof release !== "function") return { errors: [rateLimited(release, false)] };
      const taken = limiter.take(principal, cost);
      if (taken) {
        release();
        return { errors: [rateLimited(taken, false)] };
      }
      if (subscription)
        return Promise.resolve(run(args)).then(
          (r) => heldWhileOpen(r, release),
          (e: unknown) => {
            release();
            throw e;
          },
        );
      if (cost < HEAVY_OPERATION_COST) return Promise.resolve(run(args)).finally(release);
      return limiter.heavyTurn(principal).then((finished) =>
        Promise.resolve(run(args)).finally(() => {
          finished();
          release();
        }),
      );
    };
  const wsCleanup = useServer<Record<string, unknown>>(
    {
      schema,
      parse: (source) => parse(source, { maxTokens: QUERY_LIMITS.maxTokens }),
      validate: armoredValidate(armor.validationRules),
      execute: limited(execute, false),
      subscribe: limited(subscribe, true),
      onConnect: async (ctx) => {
        const params = ctx.connectionParams ?? {};
        const secret = bearerSecret(params.authorization ?? params.Authorization);
        const { socket, headers } = ctx.extra.request;
        const from = clientAddress(socket.remoteAddress, headers["x-forwarded-for"], proxies);
        const auth = await authenticateBearer(principals, authFailures, secret, from);
        const principal = "principal" in auth ? auth.principal : null;
        if (!principal || !secret) return false; // closes with 4403 Forbidden
        const release = limiter.connect(principal);
        if (!release) {
          ctx.extra.socket.close(
            WS_TOO_MANY_CONNECTIONS,
            `Too many connections: token "${principal.name}" has its most open; close one first`.slice(
              0,
              120,
            ),
          );
          return false;
        }
        connections.set(ctx, { secret, principal, socket: ctx.extra.socket, release });
        return true;
      },
      onSubscribe: async (ctx) => {
        // Counted before any await: subscribes of one connection arrive in order, each already
        // in ctx.subscriptions when its hook runs.
        if (Object.keys(ctx.subscriptions).length > WS_MAX_SUBSCRIPTIONS)
          return [
            new GraphQLError(`at most ${WS_MAX_SUBSCRIPTIONS} subscriptions per connection`, {
              extensions: { code: "BAD_USER_INPUT" },
            }),
          ];
        const c = connections.get(ctx);
        const principal = c ? await principals.principalFor(c.secret) : null;
        if (!c || !principal) {
          ctx.extra.socket.close(4403, "Forbidden: the token is no longer valid");
          return [
            new GraphQLError("the token is no longer valid", { extensions: { code: "UNAUTHENTICATED" } }),
          ];
        }
        c.principal = principal;
      },
      // The same errors as over HTTP: no stack, nothing of an unexpected failure but a request id.
      onNext: (_ctx, _id, _payload, _args, result) =>
        result.errors
          ? { ...result, errors: result.errors.map((e) => clientError(e.toJSON(), e, debug)) }
          : undefined,
      onError: (_ctx, _id, _payload, errors) => errors.map((e) => clientError(e.toJSON(), e, debug)),
      onClose: (ctx) => {
        connections.get(ctx)?.release();
        connections.delete(ctx);
      },
      context: (ctx): ApiContext => createContext(deps, connections.get(ctx)?.principal ?? null),
    },
    wsServer,
  );

  const apollo = new ApolloServer<ApiContext>({
    schema,
    // The process that hosts the server (serve, dev) owns the signals and stops it with close().
    stopOnTerminationSignals: false,
    ...armor,
    includeStacktraceInErrorResponses: debug,
    formatError: (formatted, error) => clientError(formatted, error, debug),
    plugins: [
      ...armor.plugins,
      costLimitPlugin(schema, limiter, () => fleet.current()),
      ApolloServerPluginDrainHttpServer({ httpServer }),
      ApolloServerPluginLandingPageDisabled(),
      ApolloServerPluginCacheControlDisabled(), // no HTTP caching of GraphQL here: skip the per-field hints
      { serverWillStart: async () => ({ drainServer: async () => void (await wsCleanup.dispose()) }) },
    ],
  });
  await apollo.start();

  app.get("/healthz", healthz);
  app.get("/readyz", readyz(store, bus));
  // Operations and the web dashboard live in their own modules (src/metrics, src/dashboard).
  mountMetrics(
    app,
    store,
    opts.schedulerConfig,
    opts.metricsRegistries ?? [],
    async (req) => (await principalFor(req.headers.authorization)) !== null,
  );
  mountDashboard(app);
  mountAuthRoutes(app, oidc);
  app.use(
    "/graphql",
    // The token's operations in flight, counted before the body is even read: a token at its
    // cap, or within the retryAfter of its last cost refusal, is refused for the price of a
    // header lookup. The latter is answered when the retryAfter has passed, at most
    // HELD_ANSWER_DELAY_MS later, counted in flight meanwhile: a client that does not wait is
    // slowed to a few requests a second rather than sending thousands a second, each answered.
    async (req, res, next) => {
      const refuse = (r: Refusal) =>
        res
          .status(429)
          .set("retry-after", String(r.retryAfter))
          .json({ errors: [{ message: refusalMessage(r), extensions: { code: RATE_LIMITED, ...r } }] });
      try {
        const secret = bearerSecret(req.headers.authorization);
        const from = clientAddress(req.socket.remoteAddress, req.headers["x-forwarded-for"], proxies);
        const auth = await authenticateBearer(principals, authFailures, secret, from);
        if (!("principal" in auth))
          return res
            .status(429)
            .set("retry-after", String(auth.retryAfter))
            .json({
              errors: [
                { message: auth.message, extensions: { code: RATE_LIMITED, retryAfter: auth.retryAfter } },
              ],
            });
        const { principal } = auth;
        res.locals.principal = principal;
        res.locals.authRefusal = auth.refusal;
        if (!principal) return next();
        const release = limiter.enter(principal);
        if (typeof release !== "function") return refuse(release);
        const held = limiter.held(principal);
        if (!held) {
          res.once("close", release);
          return next();
        }
        const answer = setTimeout(() => refuse(held), Math.min(held.retryAfter * 1000, HELD_ANSWER_DELAY_MS));
        res.once("close", () => {
          clearTimeout(answer);
          release();
        });
      } catch (e) {
        // Authentication needs the database: answered as Apollo answers a failed context.
        res.status(500).json({ errors: [internalError(e)] });
      }
    },
    express.json({ limit: "4mb" }),
    expressMiddleware(apollo, {
      context: async ({ res }) =>
        createContext(
          deps,
          (res.locals.principal as Principal | null) ?? null,
          (res.locals.authRefusal as AuthRefusal | null) ?? null,
        ),
    }),
  );

  // Errors no route answered (a body that is not JSON, or too large; a failure): JSON without a
  // stack trace, not Express's page, which shows the stack outside production.
  app.use(
    (
      err: { status?: number; type?: string },
      _req: express.Request,
      res: express.Response,
      next: express.NextFunction,
    ) => {
      if (res.headersSent) return next(err);
      const status = err.status ?? 500;
      if (status >= 500) return res.status(500).json({ errors: [internalError(err)] });
      const message =
        err.type === "entity.parse.failed"
          ? "the request body is not valid JSON"
          : err.type === "entity.too.large"
            ? "the request body is too large (at most 4 MiB)"
            : "the request could not be read";
      res.status(status).json({ errors: [{ message, extensions: { code: "BAD_REQUEST" } }] });
    },
  );

  const port = opts.port ?? Number(process.env.FLEETQ_PORT ?? 4000);
  await new Promise<void>((resolve, reject) => {
    httpServer.once("error", reject);
    httpServer.listen(port, opts.host, () => resolve());
  });
  const address = httpServer.address() as AddressInfo;
  const host = opts.host ?? "localhost";
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${address.port}/graphql`,
    port: address.port,
    store,
    close: async () => {
      await apollo.stop();
      await deps.logs.close();
      await bus.close();
      await db?.close();
    },
  };
}
