// `fleetq render` shows what runs: for every example job spec, the objects the API renders
// (renderJob) are, object for object, those the Kubernetes agent sends to the API server once the
// job is submitted and placed — but for what only the placement knows (the job's id, the bind's
// annotations, the GPU devices, the Service's owners).
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { pino } from "pino";
import { parseAllDocuments } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubernetesBackend } from "../../src/agent/backends/kubernetes/kubernetes-backend.js";
import { parseJobSpecs } from "../../src/cli/job-spec.js";
import {
  BIND_GENERATION_KEY,
  BIND_REQUEST_KEY,
  GPU_DEVICES_KEY,
  GPU_GROUPS_KEY,
  NVIDIA_VISIBLE_DEVICES,
} from "../../src/protocol/labels.js";
import { gqlOk } from "../helpers/api.js";
import { type ApiAgent, startApiAgent } from "./api-agent.js";
import type { Json } from "./fake-kube-store.js";
import { FakeKubeApiServer } from "./fake-kube-apiserver.js";
import { until } from "./until.js";

const log = pino({ level: process.env.AGENT_TEST_LOG ?? "silent" });
const EXAMPLES = path.resolve(import.meta.dirname, "../../examples/jobs");
const PREVIEW_ID = "00000000-0000-0000-0000-000000000000";
/** Annotations a pod gets when it is bound (the BindRequest it carries out, its GPUs). */
const BIND_TIME = [BIND_REQUEST_KEY, BIND_GENERATION_KEY, GPU_GROUPS_KEY, GPU_DEVICES_KEY];

const specFiles = readdirSync(EXAMPLES).filter((f) => f.endsWith(".yaml"));

/** What placement decides, left out: the input runs on c1 in queue "train", anywhere there. */
function placeable(input: Record<string, unknown>): Record<string, unknown> {
  const { cluster: _c, clusterSelector: _s, topology: _t, ...rest } = input;
  const tasks = (rest.tasks as Record<string, unknown>[]).map(
    ({ gpuModel: _g, nodeSelector: _n, ...t }) => t,
  );
  const subGroups = (rest.subGroups as Record<string, unknown>[] | undefined)?.map(
    ({ topology: _g, ...g }) => g,
  );
  return { ...rest, queue: "train", cluster: "c1", tasks, ...(subGroups ? { subGroups } : {}) };
}

/** An object as the agent created it, without what only its placement knows. */
function unplaced(object: Json): Json {
  const o = structuredClone(object);
  if (o.kind === "Service") delete o.metadata.ownerReferences;
  if (o.kind === "Pod") {
    for (const key of BIND_TIME) delete o.metadata.annotations[key];
    for (const c of [...(o.spec.containers ?? []), ...(o.spec.initContainers ?? [])])
      c.env = c.env.filter((e: { name: string }) => e.name !== NVIDIA_VISIBLE_DEVICES);
  }
  return o;
}

/** The rendered objects with the job's real id where the preview's stands (the id, and its last
 * eight hex digits in names). */
function withId(objects: Json[], id: string): Json[] {
  const short = id.replace(/-/g, "").slice(-8);
  return JSON.parse(JSON.stringify(objects).replaceAll(PREVIEW_ID, id).replaceAll("-00000000", `-${short}`));
}

describe("fleetq render matches what the agent creates", () => {
  let env: ApiAgent;
  let kube: FakeKubeApiServer;
  const admin = <T>(query: string, variables: Record<string, unknown> = {}) => env.admin<T>(query, variables);

  beforeAll(async () => {
    kube = await FakeKubeApiServer.start();
    for (const name of ["n1", "n2", "n3", "n4"]) kube.addNode({ name, cpu: "256", memory: "2Ti", gpus: 8 });
    env = await startApiAgent({
      label: "fleetq-render-matches",
      queue: "train",
      backend: new KubernetesBackend({
        cluster: "c1",
        kubeConfig: kube.kubeConfig(),
        defaultNamespace: "default",
        log,
        groupDebounceMs: 20,
      }),
      logger: log,
    });
    // Non-preemptible examples run only within their queue's deserved quota.
    for (const resource of ["GPU", "CPU", "MEMORY"])
      await admin(
        `mutation($r: ResourceName!) { setQueueQuota(input: { queue: "train", resource: $r, deserved: -1 }) { name } }`,
        { r: resource },
      );
    await env.untilNodes(4);
  });

  afterAll(async () => {
    await env?.close();
    await kube?.stop();
  });

  it("has example job specs to check", () => {
    expect(specFiles.length).toBeGreaterThanOrEqual(10);
  });

  it.each(specFiles)("examples/jobs/%s", async (file) => {
    const { inputs } = parseJobSpecs(readFileSync(path.join(EXAMPLES, file), "utf8"), file);
    for (const raw of inputs) {
      const input = placeable(raw);
      const { renderJob } = await admin<{ renderJob: string }>(
        'query($input: SubmitJobInput!) { renderJob(input: $input, cluster: "c1") }',
        { input },
      );
      const rendered = parseAllDocuments(renderJob).map((d) => d.toJS() as Json);
      expect(rendered.length).toBeGreaterThan(0);

      const before = kube.created.length;
      const { submitJob } = await admin<{ submitJob: { id: string } }>(
        "mutation($input: SubmitJobInput!) { submitJob(input: $input) { id } }",
        { input },
      );
      const id = submitJob.id;
      // Placed (the cycles free what the example before held as they go), every object sent.
      await until(async () => {
        await env.cycle();
        await env.dispatch();
        expect(kube.created.length - before).toBe(rendered.length);
      });
      // The agent creates the Service with the job's first pod, then the pods as they are bound.
      const sent = kube.created.slice(before);
      const byName = (o: Json) => `${o.kind}/${o.metadata.name}`;
      const order = (list: Json[]) => [...list].sort((a, b) => (byName(a) < byName(b) ? -1 : 1));
      expect(order(sent.map(unplaced))).toEqual(order(withId(rendered, id)));

      await gqlOk(env.api.url, env.api.adminToken, "mutation($id: ID!) { cancelJob(id: $id) { id } }", {
        id,
      });
      await until(async () => {
        await env.cycle();
        await env.dispatch();
        const { job } = await admin<{ job: { podStates: { state: string }[] } }>(
          "query($id: ID!) { job(id: $id) { podStates { state } } }",
          { id },
        );
        expect(job.podStates.map((p) => p.state)).toEqual(["FAILED"]);
      });
    }
  });
});
