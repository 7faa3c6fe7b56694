// Resources are fleetq's: a template may not ask for more than its task declares, the agent
// writes every container's requests and limits from the declared amounts, and a pod asking
// for nothing is refused.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { podManifest } from "../../src/agent/backends/kubernetes/pod-manifest.js";
import { declaredContainerResources, resourceOverAsk } from "../../src/protocol/pod-resources.js";
import { bindRequest, renderJobFor } from "../agent/bind-requests.js";
import type { BindRequestMessage } from "../../src/protocol/bind-request.js";
import { gql, gqlOk, startTestApi, type TestApi } from "../helpers/api.js";
import { countRows } from "../helpers/db.js";

const GiB = 2 ** 30;
type Json = Record<string, unknown>;
const c = (name: string, requests?: Json, limits?: Json): Json => ({
  name,
  image: "x",
  ...(requests || limits
    ? { resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) } }
    : {}),
});
const resourcesOf = (containers: Json[]) => containers.map((x) => x.resources);
/** The pod the agent creates for the request from its task's template. */
const manifestOf = (request: BindRequestMessage, template: unknown) =>
  podManifest(request, renderJobFor(request, template));

describe("the agent gives each container what the task declared", () => {
  it("declaring gpu 0 and asking nvidia.com/gpu: 8 in the container gets no GPU", () => {
    const pod = manifestOf(
      bindRequest({
        id: "b",
        pod: "p-0",
        node: "n",
        gpus: 0,
        cpuMillis: 1000,
        memory: GiB,
      }),
      { spec: { containers: [c("main", undefined, { "nvidia.com/gpu": 8 })] } },
    );
    expect(pod.spec!.containers[0]!.resources).toEqual({
      requests: { cpu: "1000m", memory: String(GiB) },
      limits: { cpu: "1000m", memory: String(GiB) },
    });
  });

  it("a single container gets everything, requests = limits", () => {
    const pod = manifestOf(
      bindRequest({
        id: "b",
        pod: "p-0",
        node: "n",
        gpus: 2,
        cpuMillis: 4000,
        memory: 8 * GiB,
      }),
      { spec: { containers: [c("main")] } },
    );
    const amounts = { cpu: "4000m", memory: String(8 * GiB), "nvidia.com/gpu": "2" };
    expect(pod.spec!.containers[0]!.resources).toEqual({ requests: amounts, limits: amounts });
  });

  it("containers keep the shares they ask for; the rest goes to those asking none, GPUs to the first", () => {
    const out = declaredContainerResources(
      [c("main"), c("sidecar", { cpu: "500m", memory: "1Gi" }), c("logger")],
      { cpuMillis: 4500, memory: 5 * GiB, gpus: 4 },
    );
    expect(resourcesOf(out)).toEqual([
      {
        requests: { cpu: "2000m", memory: String(2 * GiB), "nvidia.com/gpu": "4" },
        limits: { cpu: "2000m", memory: String(2 * GiB), "nvidia.com/gpu": "4" },
      },
      { requests: { cpu: "500m", memory: String(GiB) }, limits: { cpu: "500m", memory: String(GiB) } },
      {
        requests: { cpu: "2000m", memory: String(2 * GiB) },
        limits: { cpu: "2000m", memory: String(2 * GiB) },
      },
    ]);
  });

  it("a shared-GPU pod (fraction) gets no nvidia.com/gpu", () => {
    const pod = manifestOf(
      bindRequest({
        id: "b",
        pod: "p-0",
        node: "n",
        gpus: 0,
        gpuFraction: 0.5,
      }),
      { spec: { containers: [c("main", { "nvidia.com/gpu": "1" })] } },
    );
    expect(pod.spec!.containers[0]!.resources!.limits).not.toHaveProperty("nvidia.com/gpu");
  });
});

describe("a template asking for more than declared", () => {
  it("is found, field named", () => {
    const declared = { cpuMillis: 2000, memory: 4 * GiB, gpus: 1 };
    expect(
      resourceOverAsk({ containers: [c("a", { cpu: "1" }), c("b", { cpu: "1500m" })] }, declared)?.path,
    ).toEqual(["containers", 1, "resources", "requests", "cpu"]);
    expect(resourceOverAsk({ containers: [c("a", undefined, { memory: "5Gi" })] }, declared)?.path).toEqual([
      "containers",
      0,
      "resources",
      "limits",
      "memory",
    ]);
    expect(
      resourceOverAsk({ initContainers: [c("i", { "nvidia.com/gpu": 2 })], containers: [] }, declared)?.path,
    ).toEqual(["initContainers", 0, "resources", "requests", "nvidia.com/gpu"]);
    expect(resourceOverAsk({ containers: [c("a", { cpu: "lots" })] }, declared)?.message).toMatch(
      /not a Kubernetes quantity/,
    );
    expect(
      resourceOverAsk({ containers: [c("a", { cpu: "2", memory: "4Gi", "nvidia.com/gpu": 1 })] }, declared),
    ).toBeNull();
  });
});

describe("at submit", () => {
  let t: TestApi;
  const SUBMIT = "mutation($input: SubmitJobInput!) { submitJob(input: $input) { id } }";
  beforeAll(async () => {
    t = await startTestApi();
    await gqlOk(t.url, t.adminToken, `mutation { createQueue(input: { name: "team" }) { name } }`);
  });
  afterAll(async () => t?.close());

  it("gpu: 0 declared with nvidia.com/gpu: 8 in a container is refused naming the field", async () => {
    const r = await gql(t.url, t.adminToken, SUBMIT, {
      input: {
        name: "sneaky",
        queue: "team",
        tasks: [
          {
            name: "w",
            replicas: 1,
            resources: { gpu: 0, cpu: 1000 },
            template: { spec: { containers: [c("main", undefined, { "nvidia.com/gpu": 8 })] } },
          },
        ],
      },
    });
    expect(r.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      field: 'input.tasks[0].template.spec.containers[0].resources.limits["nvidia.com/gpu"]',
    });
    expect(await countRows(t.db.url, "job")).toBe(0);
  });

  it("a pod asking for no resources at all is refused", async () => {
    const r = await gql(t.url, t.adminToken, SUBMIT, {
      input: { name: "nothing", queue: "team", tasks: [{ name: "w", replicas: 1, resources: { gpu: 0 } }] },
    });
    expect(r.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      field: "input.tasks[0].resources",
    });
  });
});
