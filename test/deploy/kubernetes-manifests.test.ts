// deploy/kubernetes/agent: every document parses and is of a known kind, the pieces refer to each
// other, and the ClusterRole grants exactly what the agent's Kubernetes backend calls — the
// calls recorded by the fake API server while the backend lists, watches, binds, collides,
// evicts and deletes a finished pod, and creates, finds, runs and deletes a workload of each kind.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { KubernetesBackend } from "../../src/agent/backends/kubernetes/kubernetes-backend.js";
import { AgentSeals, SEAL_KEY } from "../../src/agent/backends/kubernetes/agent-seal.js";
import { clusterPodName } from "../../src/render/names.js";
import { RecordedEvents } from "../agent/backend-events.js";
import { CONTAINER_TEMPLATE, bindRequest, renderJobFor } from "../agent/bind-requests.js";
import { FakeKubeApiServer, type RequestRecord } from "../agent/fake-kube-apiserver.js";
import { FakeControllers } from "../agent/fake-controllers.js";
import { until } from "../agent/until.js";
import { deriveWorkload, kindNamed, workloadObject } from "../../src/workload/index.js";

const DIR = path.resolve(import.meta.dirname, "../../deploy/kubernetes/agent");
const NAMESPACED_DIR = path.join(DIR, "namespaced");

// biome-ignore lint/suspicious/noExplicitAny: free-form Kubernetes YAML, checked below
type Doc = Record<string, any>;

function documents(dir = DIR): Doc[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml")
    .flatMap((file) =>
      parseAllDocuments(readFileSync(path.join(dir, file), "utf8")).map((doc) => {
        expect(doc.errors, file).toEqual([]);
        return doc.toJS() as Doc;
      }),
    );
}

const byKind = (docs: Doc[], kind: string) => {
  const found = docs.filter((d) => d.kind === kind);
  expect(found, kind).toHaveLength(1);
  return found[0]!;
};

/** The RBAC verb, resource and subresource of one API request, and whether it is about one
 * namespace ("ns …") or the whole cluster ("cluster …"). */
function scopedPermission(r: RequestRecord): string {
  return `${/\/namespaces\/[^/]+\//.test(r.path) ? "ns" : "cluster"} ${permission(r)}`;
}

/** The RBAC verb, resource and subresource of one API request. */
function permission(r: RequestRecord): string {
  const collection = /^\/api\/v1\/(nodes|pods)$/.exec(r.path);
  if (r.method === "GET" && collection) return `${r.watch ? "watch" : "list"} ${collection[1]}`;
  if (r.method === "POST" && /^\/api\/v1\/namespaces\/[^/]+\/pods$/.test(r.path)) return "create pods";
  const one = /^\/api\/v1\/namespaces\/[^/]+\/pods\/[^/]+(?:\/(binding|eviction|log))?$/.exec(r.path);
  const verbs: Record<string, string> = { GET: "get", DELETE: "delete", POST: "create", PATCH: "patch" };
  if (one) {
    const verb = verbs[r.method];
    if (verb) return `${verb} pods${one[1] ? `/${one[1]}` : ""}`;
  }
  if (r.method === "POST" && /^\/api\/v1\/namespaces\/[^/]+\/services$/.test(r.path))
    return "create services";
  if (/^\/api\/v1\/namespaces\/[^/]+\/services\/[^/]+$/.test(r.path) && verbs[r.method])
    return `${verbs[r.method]} services`;
  // Another API group's resource: "<verb> <plural>.<group>".
  const group = /^\/apis\/([^/]+)\/[^/]+\/(?:namespaces\/[^/]+\/)?([^/]+)(\/[^/]+)?$/.exec(r.path);
  if (group) {
    const [, name, plural, one] = group;
    const verb = r.method === "GET" && !one ? (r.watch ? "watch" : "list") : verbs[r.method];
    if (verb) return `${verb} ${plural}.${name}`;
  }
  throw new Error(`a call the test does not know how to authorise: ${r.method} ${r.path}`);
}

async function backendCalls(): Promise<Set<string>> {
  const kube = await FakeKubeApiServer.start();
  const backend = new KubernetesBackend({
    cluster: "c1",
    kubeConfig: kube.kubeConfig(),
    defaultNamespace: "default",
    log: pino({ level: "silent" }),
    finishedPodTtlMs: 1,
  });
  // Every workload kind served: the backend lists and watches each.
  const controllers = new FakeControllers(kube);
  controllers.start();
  try {
    kube.addNode({ name: "n1", gpus: 8 });
    await backend.start(new RecordedEvents());
    const run = bindRequest({ id: "br-1", pod: "p-0", node: "n1" });
    await backend.bind(run, renderJobFor(run, CONTAINER_TEMPLATE));
    await backend.bind(run, renderJobFor(run, CONTAINER_TEMPLATE)); // collides: reads the pod
    // A newer bind of the pod on its node adopts the run: the pod's annotations say so.
    const newer = bindRequest({ id: "br-5", pod: "p-0", node: "n1" });
    await backend.bind(newer, renderJobFor(newer, CONTAINER_TEMPLATE));
    // A gang of two: its Service is created with the first pod and owned by the second too.
    const gang = bindRequest({ id: "br-6", jobId: "job-2", jobName: "gang", pod: "g-1", node: "n1" });
    const gangJob = renderJobFor(gang, CONTAINER_TEMPLATE);
    await backend.bind(gang, gangJob);
    await backend.bind(
      bindRequest({ id: "br-7", jobId: "job-2", jobName: "gang", pod: "g-0", node: "n1" }),
      gangJob,
    );
    // A pod's log, read.
    kube.writeLog("team-a", clusterPodName(gang), "hello");
    const lines: string[] = [];
    await backend.readLogs(
      {
        job: { id: "job-2", name: "gang", namespace: "team-a", createdInCluster: false },
        pod: "g-1",
        restarts: 0,
        tailLines: null,
        sinceSeconds: null,
        timestamps: false,
        follow: false,
        renderJob: async () => gangJob,
      },
      { write: async (text) => void lines.push(text) },
      new AbortController().signal,
    );
    expect(lines).toEqual(["hello\n"]);
    const done = bindRequest({ id: "br-2", pod: "p-1", node: "n1" });
    await backend.bind(done, renderJobFor(done, CONTAINER_TEMPLATE));
    await backend.evict(bindRequest({ id: "br-3", kind: "evict", pod: "p-0", node: "n1" }));
    kube.setPodPhase("team-a", clusterPodName(done), "Succeeded");
    await until(() => expect(kube.pod("team-a", clusterPodName(done))).toBeUndefined());
    await runWorkloads(kube, backend);
    return new Set(kube.requests.map(scopedPermission));
  } finally {
    controllers.stop();
    await backend.stop();
    await kube.stop();
  }
}

/** A manifest of each workload kind: created (and found already there, made by an agent that
 * stopped before it recorded the create: read), its first pod bound, then deleted. */
async function runWorkloads(kube: FakeKubeApiServer, backend: KubernetesBackend): Promise<void> {
  const template = { spec: { containers: [{ name: "main", image: "busybox:1.36" }] } };
  const manifests = [
    { apiVersion: "batch/v1", kind: "Job", spec: { template } },
    {
      apiVersion: "jobset.x-k8s.io/v1alpha2",
      kind: "JobSet",
      spec: { replicatedJobs: [{ name: "w", template: { spec: { template } } }] },
    },
    {
      apiVersion: "kubeflow.org/v1",
      kind: "PyTorchJob",
      spec: { pytorchReplicaSpecs: { Master: { template } } },
    },
    {
      apiVersion: "kubeflow.org/v2beta1",
      kind: "MPIJob",
      spec: { mpiReplicaSpecs: { Launcher: { template }, Worker: { replicas: 1, template } } },
    },
  ];
  for (const [i, manifest] of manifests.entries()) {
    const workload = deriveWorkload(
      { ...manifest, metadata: { name: `w${i}` } },
      { cpuMillis: 500, memory: 2 ** 30 },
    );
    const shape = {
      id: `br-w${i}`,
      jobId: `job-w${i}`,
      jobName: `w${i}`,
      workload: workload.kind,
      pod: `${workload.tasks[0]!.name}-0`,
      node: "n1",
    };
    const request = bindRequest(shape);
    const job = {
      ...renderJobFor(request, null),
      tasks: workload.tasks.map((t) => ({
        name: t.name,
        replicas: t.replicas,
        resources: request.pod.resources,
        template: t.template,
      })),
      workload: {
        kind: workload.kind,
        apiVersion: workload.apiVersion,
        name: workload.name,
        manifest: workload.manifest,
      },
    };
    const { resource } = kindNamed(workload.kind);
    // Made by this agent before it stopped: sealed (the backend here seals with this process's key).
    const object = workloadObject(workload, {
      id: job.id,
      name: job.name,
      queue: job.queue,
      namespace: "team-a",
    });
    (object.metadata as { annotations: Record<string, string> }).annotations[SEAL_KEY] =
      new AgentSeals().workloadSeal(workload.kind, "team-a", workload.name, job.id);
    kube.createObject(`${resource.group}/${resource.plural}`, object);
    expect(await backend.bind(request, job)).toMatchObject({ ok: true });
    expect(
      await backend.deleteWorkload(bindRequest({ ...shape, id: `br-d${i}`, kind: "delete", node: "" }), job),
    ).toMatchObject({
      ok: true,
    });
  }
}

/** "<verb> <resource>[.<group>]" of every rule. */
function grants(rules: Doc[]): Set<string> {
  return new Set(
    rules.flatMap((rule) =>
      (rule.apiGroups as string[]).flatMap((group) =>
        (rule.resources as string[]).flatMap((resource) =>
          (rule.verbs as string[]).map((verb) => `${verb} ${resource}${group ? `.${group}` : ""}`),
        ),
      ),
    ),
  );
}

let recorded: Promise<Set<string>> | null = null;
/** The backend's calls, recorded once for every check of this file. */
const calledOnce = () => {
  recorded ??= backendCalls();
  return recorded;
};

describe("deploy/kubernetes/agent", () => {
  it("parses into the agent's Namespace, ServiceAccount, RBAC, Secret, ConfigMap, Deployment and NetworkPolicy, which refer to each other", () => {
    const docs = documents();
    expect(docs.map((d) => d.kind).sort()).toEqual(
      [
        "ClusterRole",
        "ClusterRoleBinding",
        "ConfigMap",
        "Deployment",
        "Namespace",
        "NetworkPolicy",
        "Secret",
        "Secret",
        "ServiceAccount",
      ].sort(),
    );
    const namespace = byKind(docs, "Namespace").metadata.name;
    for (const d of docs.filter((d) => !d.kind.startsWith("Cluster") && d.kind !== "Namespace"))
      expect(d.metadata.namespace, d.kind).toBe(namespace);
    const account = byKind(docs, "ServiceAccount").metadata.name;
    const binding = byKind(docs, "ClusterRoleBinding");
    expect(binding.roleRef).toMatchObject({
      kind: "ClusterRole",
      name: byKind(docs, "ClusterRole").metadata.name,
    });
    expect(binding.subjects).toEqual([{ kind: "ServiceAccount", name: account, namespace }]);

    const deployment = byKind(docs, "Deployment");
    expect(deployment.spec.replicas).toBe(1);
    const pod = deployment.spec.template.spec;
    expect(pod.serviceAccountName).toBe(account);
    const [agent] = pod.containers;
    expect(agent.args.slice(0, 1)).toEqual(["agent"]);
    expect(agent.args).toContain("--backend=kubernetes");
    expect(agent.livenessProbe.httpGet.path).toBe("/healthz");
    expect(agent.readinessProbe.httpGet.path).toBe("/readyz");
    expect(agent.resources.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
    const volumes = new Map(pod.volumes.map((v: Doc) => [v.name, v]));
    const secrets = docs.filter((d) => d.kind === "Secret").map((d) => d.metadata.name);
    expect(secrets).toContain((volumes.get("token") as Doc).secret.secretName);
    expect((volumes.get("config") as Doc).configMap.name).toBe(byKind(docs, "ConfigMap").metadata.name);
  });

  it("connects the agent to Redis with its own user and password from a Secret, never a bare URL", () => {
    const docs = documents();
    const agent = byKind(docs, "Deployment").spec.template.spec.containers[0];
    const urlFile = (agent.args as string[]).find((a) => a.startsWith("--redis-url-file="))!;
    expect(urlFile).toBeDefined();
    expect(JSON.stringify(agent.env)).not.toMatch(/REDIS_URL/);
    const mount = (agent.volumeMounts as Doc[]).find((m) =>
      urlFile.slice("--redis-url-file=".length).startsWith(`${m.mountPath}/`),
    )!;
    const volume = (byKind(docs, "Deployment").spec.template.spec.volumes as Doc[]).find(
      (v) => v.name === mount.name,
    )!;
    const secret = docs.find((d) => d.kind === "Secret" && d.metadata.name === volume.secret.secretName)!;
    const url = new URL(secret.stringData.url);
    expect(url.protocol).toMatch(/^rediss?:$/);
    expect(url.username).not.toBe("");
    expect(url.password).not.toBe("");
  });

  it("grants the agent exactly the API calls its Kubernetes backend makes", async () => {
    const granted = grants(byKind(documents(), "ClusterRole").rules);
    const calls = new Set([...(await calledOnce())].map((c) => c.replace(/^\S+ /, "")));
    expect([...calls].filter((call) => !granted.has(call))).toEqual([]);
    expect([...granted].filter((permission) => !calls.has(permission))).toEqual([]);
  });

  it("namespaced variant: a Role per namespace grants every change, a ClusterRole only the cluster-wide watches", async () => {
    const docs = documents(NAMESPACED_DIR);
    const role = byKind(docs, "Role");
    const roleBinding = byKind(docs, "RoleBinding");
    expect(roleBinding.metadata.namespace).toBe(role.metadata.namespace);
    expect(roleBinding.roleRef).toMatchObject({ kind: "Role", name: role.metadata.name });
    const account = byKind(documents(), "ServiceAccount").metadata;
    for (const binding of [roleBinding, byKind(docs, "ClusterRoleBinding")])
      expect(binding.subjects).toEqual([
        { kind: "ServiceAccount", name: account.name, namespace: account.namespace },
      ]);
    const clusterRole = byKind(docs, "ClusterRole");
    expect(byKind(docs, "ClusterRoleBinding").roleRef).toMatchObject({
      kind: "ClusterRole",
      name: clusterRole.metadata.name,
    });
    const clusterWide = grants(clusterRole.rules);
    const inNamespace = grants(role.rules);
    // The ClusterRole reads only: every write is confined to the Role's namespace.
    expect([...clusterWide].filter((p) => !/^(list|watch) /.test(p))).toEqual([]);
    const calls = await calledOnce();
    const refused = [...calls].filter((call) => {
      const [scope, ...rest] = call.split(" ");
      return !(scope === "ns" ? inNamespace : clusterWide).has(rest.join(" "));
    });
    expect(refused).toEqual([]);
    const used = new Set([...calls].map((c) => c.replace(/^\S+ /, "")));
    expect([...clusterWide, ...inNamespace].filter((p) => !used.has(p))).toEqual([]);
  });
});
