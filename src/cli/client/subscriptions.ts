// GraphQL subscriptions over graphql-ws (same host, port and path as HTTP, ws:// or wss://).
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { apiErrorOf, type ErrorBody } from "./api-client.js";
import { bearerToken, type ConnectionSettings } from "./config.js";

export interface Subscription {
  /** Resolves when the subscription ends: completed, failed (rejects) or disposed. */
  done: Promise<void>;
  dispose(): void;
}

export function subscribe<T>(
  connection: ConnectionSettings,
  query: string,
  variables: Record<string, unknown>,
  onData: (data: T) => void,
): Subscription {
  const client = createClient({
    url: connection.url.replace(/^http/, "ws"),
    webSocketImpl: WebSocket,
    // Asked at each connection: a signed-in session's token is refreshed when due.
    connectionParams: async () => {
      const token = await bearerToken(connection);
      return token ? { authorization: `Bearer ${token}` } : {};
    },
    // The caller falls back to polling instead: no silent reconnect loops here.
    retryAttempts: 0,
    lazy: true,
  });
  let unsubscribe: () => void = () => {};
  const done = new Promise<void>((resolve, reject) => {
    unsubscribe = client.subscribe<T>(
      { query, variables },
      {
        next: (msg) => {
          if (msg.errors?.length) {
            reject(apiErrorOf(msg.errors[0] as ErrorBody));
            return;
          }
          if (msg.data) onData(msg.data as T);
        },
        error: (err) => reject(describeSubscriptionError(err)),
        complete: () => resolve(),
      },
    );
  });
  return {
    done: done.finally(() => void client.dispose()),
    dispose: () => {
      unsubscribe();
      void client.dispose();
    },
  };
}

function describeSubscriptionError(err: unknown): Error {
  if (err instanceof Error) return err;
  // The API refused the subscription: its first GraphQL error, with its code.
  if (Array.isArray(err) && err.length) return apiErrorOf(err[0] as ErrorBody);
  const event = err as { code?: number; reason?: string; type?: string };
  if (event?.code !== undefined)
    return new Error(`websocket closed (${event.code}${event.reason ? ` ${event.reason}` : ""})`);
  return new Error(`websocket error${event?.type ? ` (${event.type})` : ""}`);
}
