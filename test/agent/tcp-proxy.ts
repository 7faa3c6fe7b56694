// A TCP proxy that a test can cut and restore: a real network outage between a client (an
// agent) and a server (Redis, the API), without touching the server. With several targets it
// is also a small load balancer: each connection goes to the next target, and one a target
// refuses goes to the one after it (an API replica that died).
import { once } from "node:events";
import { connect, createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

export interface ProxyTarget {
  host: string;
  port: number;
}

export class TcpProxy {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private next = 0;
  port = 0;

  constructor(private readonly targets: ProxyTarget[]) {}

  static async start(targetHost: string, targetPort: number): Promise<TcpProxy> {
    return TcpProxy.balance([{ host: targetHost, port: targetPort }]);
  }

  /** Spreads connections over the targets; `port` fixes the proxy's own port (0 = any free one). */
  static async balance(targets: ProxyTarget[], port = 0): Promise<TcpProxy> {
    const proxy = new TcpProxy(targets);
    await proxy.listen(port);
    return proxy;
  }

  get isCut(): boolean {
    return this.server === null;
  }

  /** Drops every connection and refuses new ones. */
  async cut(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Accepts connections again, on the same port. */
  async restore(): Promise<void> {
    await this.listen(this.port);
  }

  async stop(): Promise<void> {
    await this.cut();
  }

  private listen(port: number): Promise<void> {
    const server = createServer((client) => {
      this.sockets.add(client);
      client.pause();
      client.on("error", () => client.destroy()).on("close", () => this.sockets.delete(client));
      this.pipe(client, this.targets.length);
    });
    server.listen(port, "127.0.0.1");
    return once(server, "listening").then(() => {
      this.server = server;
      this.port = (server.address() as AddressInfo).port;
    });
  }

  /** Connects `client` to the next target, moving on to another when one refuses. */
  private pipe(client: Socket, triesLeft: number): void {
    const target = this.targets[this.next++ % this.targets.length]!;
    const upstream = connect(target.port, target.host);
    this.sockets.add(upstream);
    let connected = false;
    let closed = false;
    upstream.once("connect", () => {
      connected = true;
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
    const close = () => {
      if (closed) return;
      closed = true;
      this.sockets.delete(upstream);
      if (!connected && triesLeft > 1 && !client.destroyed && this.server) {
        this.pipe(client, triesLeft - 1);
        return;
      }
      client.destroy();
      upstream.destroy();
    };
    upstream.on("error", close).on("close", close);
    client.on("close", () => upstream.destroy());
  }
}
