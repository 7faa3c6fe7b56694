// A small in-test GraphQL endpoint standing in for the API server's agent mutations
// (schema.graphql): it checks the bearer token, records every call with its variables, and can be
// taken down (503) or made to refuse, to test the agent's retries. Once src/api exists,
// the agent tests can point at the real server instead; the calls are the same.
import { CONTAINER_TEMPLATE, testBindKey } from "./bind-requests.js";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Kind, type OperationDefinitionNode, parse } from "graphql";

export interface RecordedCall {
  field: string;
  variables: Record<string, unknown>;
}

export class GraphQLRecorder {
  readonly calls: RecordedCall[] = [];
  /** While true every request gets HTTP 503, as an API outage would. */
  down = false;
  /** Fields answered with an error of this code (e.g. FORBIDDEN for registerCluster). */
  readonly refuse = new Map<string, string>();
  private server!: Server;
  url = "";

  constructor(
    readonly token: string,
    readonly principal: { name: string; role: string; cluster: string | null },
  ) {}

  static async start(token: string, cluster: string, role = "AGENT"): Promise<GraphQLRecorder> {
    const recorder = new GraphQLRecorder(token, { name: `agent-${cluster}`, role, cluster });
    recorder.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const { status, body } = recorder.answer(
          req.headers.authorization,
          Buffer.concat(chunks).toString("utf8"),
        );
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      });
    });
    recorder.server.listen(0, "127.0.0.1");
    await once(recorder.server, "listening");
    recorder.url = `http://127.0.0.1:${(recorder.server.address() as AddressInfo).port}/graphql`;
    return recorder;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  callsOf(field: string): RecordedCall[] {
    return this.calls.filter((call) => call.field === field);
  }

  /** Every bind result received, in order. */
  bindResults(): { bindRequest: string; ok: boolean; message: string }[] {
    return this.callsOf("reportBindResult").flatMap(
      (call) => call.variables.results as { bindRequest: string; ok: boolean; message: string }[],
    );
  }

  podUpdates(): { job: string; pod: string; state: string; message?: string }[] {
    return this.callsOf("reportPodStatus").flatMap(
      (call) => call.variables.updates as { job: string; pod: string; state: string; message?: string }[],
    );
  }

  private answer(authorization: string | undefined, text: string): { status: number; body: unknown } {
    if (this.down) return { status: 503, body: { errors: [{ message: "service unavailable" }] } };
    if (authorization !== `Bearer ${this.token}`) {
      return {
        status: 200,
        body: { errors: [{ message: "bad token", extensions: { code: "UNAUTHENTICATED" } }] },
      };
    }
    const request = JSON.parse(text) as { query: string; variables?: Record<string, unknown> };
    const operation = parse(request.query).definitions.find(
      (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
    )!;
    const selection = operation.selectionSet.selections[0]!;
    const field = selection.kind === Kind.FIELD ? selection.name.value : "?";
    const variables = request.variables ?? {};
    const refusal = this.refuse.get(field);
    if (refusal)
      return {
        status: 200,
        body: { errors: [{ message: `refused ${field}`, extensions: { code: refusal } }] },
      };
    this.calls.push({ field, variables });
    switch (field) {
      case "me":
        return { status: 200, body: { data: { me: this.principal } } };
      case "agentBindKey":
        return { status: 200, body: { data: { agentBindKey: testBindKey(String(variables.c)) } } };
      case "registerCluster":
        return { status: 200, body: { data: { registerCluster: { name: this.principal.cluster } } } };
      case "reportNodes":
        return { status: 200, body: { data: { reportNodes: (variables.nodes as unknown[]).length } } };
      case "reportPodStatus":
        return { status: 200, body: { data: { reportPodStatus: (variables.updates as unknown[]).length } } };
      case "reportBindResult":
        return { status: 200, body: { data: { reportBindResult: (variables.results as unknown[]).length } } };
      case "jobRenderSpec":
        return {
          status: 200,
          body: {
            data: {
              jobRenderSpec: {
                job: variables.job,
                name: "train",
                namespace: "team-a",
                queue: "research",
                minMember: 1,
                rendezvousPort: null,
                // Pods "main-0" … "main-63" of one task.
                tasks: [
                  {
                    name: "main",
                    replicas: 64,
                    resources: { cpu: 1000, memory: String(2 ** 30), gpu: 0, gpuMemory: 0 },
                    template: CONTAINER_TEMPLATE,
                  },
                ],
              },
            },
          },
        };
      case "reportPodInventory":
        return { status: 200, body: { data: { reportPodInventory: 0 } } };
      case "reportPodGroups":
        return { status: 200, body: { data: { reportPodGroups: (variables.groups as unknown[]).length } } };
      default:
        return {
          status: 400,
          body: {
            errors: [
              { message: `Cannot query field "${field}"`, extensions: { code: "GRAPHQL_VALIDATION_FAILED" } },
            ],
          },
        };
    }
  }
}
