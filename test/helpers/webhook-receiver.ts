// An HTTP endpoint on 127.0.0.1 that webhook tests send to: it records every request (headers
// and the body byte for byte) and answers with the statuses it is given, in turn (the last one
// repeats), optionally with headers (a redirect's location).
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
}

export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];

  private constructor(
    private readonly server: http.Server,
    private answers: Answer[],
  ) {}

  static async start(answers: Answer[] = [{ status: 200 }]): Promise<WebhookReceiver> {
    const server = http.createServer();
    const receiver = new WebhookReceiver(server, answers);
    server.on("request", (req, res) => receiver.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  /** Answers from now on. */
  answer(...answers: Answer[]): void {
    this.answers = answers;
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      this.requests.push({
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        at: Date.now(),
      });
      const a = this.answers.length > 1 ? this.answers.shift()! : this.answers[0]!;
      res.writeHead(a.status, a.headers).end();
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
