// An in-test HTTP server that speaks the Kubernetes API for the routes the agent uses:
// Node and Pod lists (with metadata.resourceVersion), watches as newline-delimited JSON
// over chunked HTTP (resume from a resourceVersion; 410 Gone once it was compacted),
// pod create/read/delete (with a uid precondition), the Binding and Eviction subresources, pod
// logs (tail, since, timestamps, follow as a chunked stream that ends with the container), Services
// (create, read, JSON Patch with test, delete), the objects of other API groups a test serves (a
// Job, JobSet, PyTorchJob, MPIJob: create, read, list and watch by label, delete with a
// propagation policy), the garbage collector's removal of an object whose owners are all gone,
// Status objects for errors, bearer-token auth, and injected faults (429/500) or held requests.
import { once } from "node:events";
import { type IncomingMessage, type ServerResponse, createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import {
  FakeKubeStore,
  type Json,
  type Resource,
  type StoredEvent,
  type Watcher,
  clone,
} from "./fake-kube-store.js";

export interface Fault {
  method: string;
  path: RegExp;
  status: 429 | 500 | 503;
  times: number;
  retryAfterSeconds?: number;
}

export interface RequestRecord {
  method: string;
  path: string;
  /** A watch (?watch=true) rather than a list. */
  watch: boolean;
  status: number;
}

/** A request stopped on arrival until the test lets it go: applied (the server carries it
 * out; the client may be gone by then) or dropped (never carried out). */
export interface HeldRequest {
  arrived: Promise<void>;
  release(action: "apply" | "drop"): void;
}

interface Hold {
  method: string;
  path: RegExp;
  arrived: () => void;
  decision: Promise<"apply" | "drop">;
}

/** An API group's resource the fake serves (its CRD installed, or batch/v1 Jobs). */
export interface ServedResource {
  group: string;
  version: string;
  plural: string;
  kind: string;
  /** What a DELETE without a propagation policy does: batch/v1 Jobs orphan their pods. */
  defaultPropagation?: "Background" | "Orphan";
}

export interface NodeShape {
  name: string;
  cpu?: string;
  memory?: string;
  gpus?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  taints?: { key: string; value?: string; effect: string }[];
  unschedulable?: boolean;
  ready?: boolean;
}

export class FakeKubeApiServer {
  readonly store = new FakeKubeStore();
  readonly token = "fake-kube-token";
  readonly requests: RequestRecord[] = [];
  /** What the server carried out, whether or not the client heard the answer:
   * "create ns/name", "bind ns/name node", "evict ns/name", "delete ns/name". */
  readonly effects: string[] = [];
  /** The bodies of the objects created (pods and Services), as the client sent them. */
  readonly created: Json[] = [];
  /** 410 for a stale watch as an ERROR event in a 200 stream (what watch caches send) or
   * as the HTTP status. */
  goneAs: "event" | "http" = "event";
  /** Served resources of other API groups, by "<group>/<plural>". */
  private readonly served = new Map<string, ServedResource>();
  /** Acts as the kubelet: a bound pod starts Running at once. */
  autoRun = true;
  /** What each pod's containers wrote, by "namespace/pod/container" (the kubelet's log files). */
  private readonly logs = new Map<string, LogLine[]>();
  /** Open follows, woken when a line is written or the pod changes. */
  private readonly followers = new Set<() => void>();
  private faults: Fault[] = [];
  private holds: Hold[] = [];
  private server!: Server;
  url = "";

  static async start(): Promise<FakeKubeApiServer> {
    const fake = new FakeKubeApiServer();
    fake.server = createServer((req, res) => {
      fake.handle(req, res).catch((err) => {
        if (!res.headersSent) fake.status(res, 500, "InternalError", String(err));
        else res.end();
      });
    });
    fake.server.listen(0, "127.0.0.1");
    await once(fake.server, "listening");
    fake.url = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
    return fake;
  }

  async stop(): Promise<void> {
    this.dropWatches();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** A kubeconfig for this server: plain HTTP needs insecure-skip-tls-verify in client-node 2.x. */
  kubeconfigYaml(): string {
    return [
      "apiVersion: v1",
      "kind: Config",
      "clusters:",
      "- name: fake",
      "  cluster:",
      `    server: ${this.url}`,
      "    insecure-skip-tls-verify: true",
      "users:",
      "- name: agent",
      "  user:",
      `    token: ${this.token}`,
      "contexts:",
      "- name: fake",
      "  context: { cluster: fake, user: agent }",
      "current-context: fake",
      "",
    ].join("\n");
  }

  kubeConfig(): KubeConfig {
    const config = new KubeConfig();
    config.loadFromString(this.kubeconfigYaml());
    return config;
  }

  // ---- test controls -------------------------------------------------------------

  injectFault(fault: Fault): void {
    this.faults.push(fault);
  }

  hold(method: string, path: RegExp): HeldRequest {
    let arrived!: () => void;
    let decide!: (action: "apply" | "drop") => void;
    const arrivedPromise = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const decision = new Promise<"apply" | "drop">((resolve) => {
      decide = resolve;
    });
    this.holds.push({ method, path, arrived, decision });
    return { arrived: arrivedPromise, release: decide };
  }

  /** Ends every open watch stream, as a dropped connection or API server restart would. */
  dropWatches(): void {
    for (const watcher of [...this.store.watchers]) watcher.close();
  }

  count(method: string, path: RegExp, status?: number): number {
    return this.requests.filter(
      (r) => r.method === method && path.test(r.path) && (status === undefined || r.status === status),
    ).length;
  }

  addNode(shape: NodeShape): Json {
    return this.store.create("nodes", shape.name, {
      metadata: {
        name: shape.name,
        labels: { "kubernetes.io/hostname": shape.name, ...shape.labels },
        ...(shape.annotations ? { annotations: shape.annotations } : {}),
      },
      spec: {
        ...(shape.unschedulable ? { unschedulable: true } : {}),
        ...(shape.taints ? { taints: shape.taints } : {}),
      },
      status: {
        capacity: resources(shape),
        allocatable: resources(shape),
        conditions: [
          { type: "Ready", status: shape.ready === false ? "False" : "True", reason: "KubeletReady" },
        ],
      },
    });
  }

  updateNode(name: string, mutate: (node: Json) => void): Json {
    return this.store.update("nodes", name, mutate);
  }

  deleteNode(name: string): void {
    this.store.remove("nodes", name);
  }

  /** Serves a resource of another API group (as installing its CRD does). */
  serve(resource: ServedResource): void {
    const key = `${resource.group}/${resource.plural}`;
    this.served.set(key, resource);
    this.store.serve(key, { kind: resource.kind, apiVersion: `${resource.group}/${resource.version}` });
  }

  /** An object of a served resource ("batch/jobs"), by namespace and name. */
  object(resource: string, namespace: string, name: string): Json | undefined {
    return this.store.serves(resource) ? this.store.get(resource, `${namespace}/${name}`) : undefined;
  }

  /** The objects of a served resource. */
  objectsOf(resource: string): Json[] {
    return this.store.serves(resource) ? this.store.list(resource, () => true) : [];
  }

  /** An object created by someone other than the agent (a controller making a child Job). */
  createObject(resource: string, object: Json): Json {
    const namespace = object.metadata.namespace ?? "default";
    const next = clone(object);
    delete next.kind;
    delete next.apiVersion;
    next.metadata = { ...next.metadata, namespace };
    return this.store.create(resource, `${namespace}/${object.metadata.name}`, next);
  }

  /** Acts as a controller writing an object's status. */
  updateObject(resource: string, namespace: string, name: string, mutate: (object: Json) => void): Json {
    return this.store.update(resource, `${namespace}/${name}`, mutate);
  }

  /** A pod created directly in the cluster (as kubectl would). */
  createPod(pod: Json): Json {
    const namespace = pod.metadata.namespace ?? "default";
    return this.store.create("pods", `${namespace}/${pod.metadata.name}`, newPod(clone(pod), namespace));
  }

  pod(namespace: string, name: string): Json | undefined {
    return this.store.get("pods", `${namespace}/${name}`);
  }

  /** Someone else deletes a pod (kubectl delete, a controller): gone at once. */
  deletePod(namespace: string, name: string): void {
    this.removePod(namespace, name);
  }

  service(namespace: string, name: string): Json | undefined {
    return this.store.get("services", `${namespace}/${name}`);
  }

  /** Acts as a container writing a line to its output (the first container when none is named). */
  writeLog(namespace: string, pod: string, line: string, container?: string, at = new Date()): void {
    const object = this.pod(namespace, pod);
    const name = container ?? object?.spec?.containers?.[0]?.name ?? "";
    const key = `${namespace}/${pod}/${name}`;
    const lines = this.logs.get(key) ?? [];
    lines.push({ at, text: line });
    this.logs.set(key, lines);
    this.wakeFollowers();
  }

  /** A pod leaves the store: the garbage collector then removes what it alone owned. */
  private removePod(namespace: string, name: string): void {
    this.store.remove("pods", `${namespace}/${name}`);
    this.wakeFollowers();
    this.collectGarbage(namespace);
  }

  /** Objects whose owners (by uid, in their namespace) are all gone are deleted, as the garbage
   * collector deletes them (background propagation), until none is left: a JobSet's Jobs, then
   * their pods. */
  private collectGarbage(namespace: string): void {
    for (;;) {
      const alive = new Set<string>();
      for (const resource of this.store.resources())
        for (const o of this.store.objects[resource]!.values())
          if (o.metadata.namespace === namespace || o.metadata.namespace === undefined)
            alive.add(o.metadata.uid as string);
      const orphans: [string, string][] = [];
      for (const resource of this.store.resources())
        for (const [key, o] of this.store.objects[resource]!) {
          const owners = (o.metadata.ownerReferences ?? []) as Json[];
          if (o.metadata.namespace !== namespace || owners.length === 0) continue;
          if (!owners.some((owner) => alive.has(owner.uid))) orphans.push([resource, key]);
        }
      if (!orphans.length) return;
      for (const [resource, key] of orphans) {
        this.store.remove(resource, key);
        this.effects.push(`collect ${this.store.typeOf(resource).kind.toLowerCase()} ${key}`);
      }
      if (orphans.some(([resource]) => resource === "pods")) this.wakeFollowers();
    }
  }

  private wakeFollowers(): void {
    for (const wake of [...this.followers]) wake();
  }

  /** Acts as the kubelet reporting a phase (a finished pod's containers say when they ended). */
  setPodPhase(
    namespace: string,
    name: string,
    phase: string,
    message?: string,
    finishedAt = new Date(),
    exitCode = phase === "Succeeded" ? 0 : 1,
  ): void {
    this.store.update("pods", `${namespace}/${name}`, (pod) => {
      pod.status.phase = phase;
      if (message) pod.status.message = message;
      if (phase === "Succeeded" || phase === "Failed") {
        pod.status.containerStatuses = (pod.spec.containers ?? []).map((c: Json) => ({
          name: c.name,
          ready: false,
          restartCount: 0,
          image: c.image,
          imageID: "",
          state: {
            terminated: {
              exitCode,
              reason: phase === "Succeeded" ? "Completed" : "Error",
              finishedAt: finishedAt.toISOString(),
            },
          },
        }));
      }
    });
    this.wakeFollowers();
  }

  // ---- HTTP ----------------------------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? "/", this.url);
    const method = req.method ?? "GET";
    const record: RequestRecord = {
      method,
      path: url.pathname,
      watch: url.searchParams.get("watch") === "true",
      status: 0,
    };
    this.requests.push(record);
    res.on("finish", () => {
      record.status = res.statusCode;
    });
    if (req.headers.authorization !== `Bearer ${this.token}`)
      return this.status(res, 401, "Unauthorized", "Unauthorized");

    const fault = this.faults.find((f) => f.times > 0 && f.method === method && f.path.test(url.pathname));
    if (fault) {
      fault.times--;
      if (fault.retryAfterSeconds !== undefined)
        res.setHeader("Retry-After", String(fault.retryAfterSeconds));
      const reason = fault.status === 429 ? "TooManyRequests" : "InternalError";
      return this.status(res, fault.status, reason, `injected fault ${fault.status}`);
    }
    if (method === "PATCH" && req.headers["content-type"] !== "application/json-patch+json")
      return this.status(
        res,
        415,
        "UnsupportedMediaType",
        `the body of the request was in an unknown format`,
      );
    const body = method === "POST" || method === "DELETE" || method === "PATCH" ? await readJson(req) : null;
    const hold = this.holds.find((h) => h.method === method && h.path.test(url.pathname));
    if (hold) {
      this.holds.splice(this.holds.indexOf(hold), 1);
      hold.arrived();
      if ((await hold.decision) === "drop") {
        res.socket?.destroy();
        return;
      }
    }
    return this.route(method, url, body, res);
  }

  private route(method: string, url: URL, body: Json | null, res: ServerResponse) {
    const path = url.pathname;
    const watch = url.searchParams.get("watch") === "true";
    if (method === "GET" && path === "/api/v1/nodes") return this.collection("nodes", url, res, watch);
    if (method === "GET" && path === "/api/v1/pods") return this.collection("pods", url, res, watch);
    const podsIn = /^\/api\/v1\/namespaces\/([^/]+)\/pods$/.exec(path);
    if (podsIn && method === "POST") return this.createPodRoute(podsIn[1]!, body ?? {}, res);
    const onePod = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)(?:\/(binding|eviction|log))?$/.exec(path);
    if (onePod) {
      const [, namespace, name, sub] = onePod as unknown as [string, string, string, string | undefined];
      if (method === "GET" && sub === "log") return this.logRoute(namespace, name, url, res);
      if (method === "GET" && !sub) return this.readPodRoute(namespace, name, res);
      if (method === "DELETE" && !sub) return this.deletePodRoute(namespace, name, body ?? {}, res);
      if (method === "PATCH" && !sub) return this.patchPodRoute(namespace, name, body, res);
      if (method === "POST" && sub === "binding") return this.bindingRoute(namespace, name, body ?? {}, res);
      if (method === "POST" && sub === "eviction") return this.evictionRoute(namespace, name, res);
    }
    const servicesIn = /^\/api\/v1\/namespaces\/([^/]+)\/services$/.exec(path);
    if (servicesIn && method === "POST") return this.createServiceRoute(servicesIn[1]!, body ?? {}, res);
    const oneService = /^\/api\/v1\/namespaces\/([^/]+)\/services\/([^/]+)$/.exec(path);
    if (oneService) {
      const [, namespace, name] = oneService as unknown as [string, string, string];
      const key = `${namespace}/${name}`;
      const found = this.store.get("services", key);
      if (!found) return this.status(res, 404, "NotFound", `services "${name}" not found`);
      if (method === "GET")
        return this.json(res, 200, { kind: "Service", apiVersion: "v1", ...clone(found) });
      if (method === "DELETE") {
        this.store.remove("services", key);
        this.effects.push(`delete service ${key}`);
        return this.json(res, 200, { kind: "Service", apiVersion: "v1", ...clone(found) });
      }
      if (method === "PATCH") return this.patchServiceRoute(key, found, body, res);
    }
    const group = /^\/apis\/([^/]+)\/([^/]+)\/(?:namespaces\/([^/]+)\/)?([^/]+)(?:\/([^/]+))?$/.exec(path);
    const served = group && this.served.get(`${group[1]}/${group[4]}`);
    if (group && served && served.version === group[2]) {
      const [, , , namespace, , name] = group as unknown as (string | undefined)[];
      const resource = `${served.group}/${served.plural}`;
      if (!name && method === "GET") return this.collection(resource, url, res, watch, namespace);
      if (namespace && !name && method === "POST")
        return this.createObjectRoute(served, namespace, body ?? {}, res);
      if (namespace && name && method === "GET") {
        const found = this.store.get(resource, `${namespace}/${name}`);
        if (!found)
          return this.status(res, 404, "NotFound", `${served.plural}.${served.group} "${name}" not found`);
        return this.json(res, 200, { ...this.store.typeOf(resource), ...clone(found) });
      }
      if (namespace && name && method === "DELETE")
        return this.deleteObjectRoute(served, namespace, name, url, body ?? {}, res);
    }
    this.status(res, 404, "NotFound", `the server could not find the requested resource (${method} ${path})`);
  }

  private createObjectRoute(served: ServedResource, namespace: string, body: Json, res: ServerResponse) {
    const resource = `${served.group}/${served.plural}`;
    const name = body.metadata?.name as string | undefined;
    if (!name)
      return this.status(
        res,
        422,
        "Invalid",
        `${served.kind}.${served.group} is invalid: metadata.name: Required value`,
      );
    if (body.metadata?.namespace && body.metadata.namespace !== namespace)
      return this.status(
        res,
        400,
        "BadRequest",
        `the namespace of the provided object does not match the namespace sent on the request`,
      );
    if (body.kind !== served.kind || body.apiVersion !== `${served.group}/${served.version}`)
      return this.status(
        res,
        400,
        "BadRequest",
        `the object is a ${body.apiVersion} ${body.kind}, not a ${served.kind}`,
      );
    const key = `${namespace}/${name}`;
    if (this.store.get(resource, key))
      return this.status(
        res,
        409,
        "AlreadyExists",
        `${served.plural}.${served.group} "${name}" already exists`,
      );
    this.created.push(clone(body));
    const object = clone(body);
    delete object.kind;
    delete object.apiVersion;
    object.metadata = { ...object.metadata, namespace };
    const created = this.store.create(resource, key, object);
    this.effects.push(`create ${served.kind.toLowerCase()} ${key}`);
    this.json(res, 201, { ...this.store.typeOf(resource), ...created });
  }

  /** Background (and Foreground, which this fake treats alike): the object goes, then the garbage
   * collector removes what it owned; Orphan: what it owned stays. */
  private deleteObjectRoute(
    served: ServedResource,
    namespace: string,
    name: string,
    url: URL,
    body: Json,
    res: ServerResponse,
  ) {
    const resource = `${served.group}/${served.plural}`;
    const key = `${namespace}/${name}`;
    const found = this.store.get(resource, key);
    if (!found)
      return this.status(res, 404, "NotFound", `${served.plural}.${served.group} "${name}" not found`);
    // DeleteOptions: preconditions.uid must match (409 Conflict otherwise), as for every kind.
    const uid = body.preconditions?.uid;
    if (uid && uid !== found.metadata.uid)
      return this.status(
        res,
        409,
        "Conflict",
        `Operation cannot be fulfilled on ${served.plural}.${served.group} "${name}": Precondition failed: UID in precondition: ${uid}, UID in object meta: ${found.metadata.uid}`,
      );
    const policy =
      url.searchParams.get("propagationPolicy") ??
      (body.propagationPolicy as string | undefined) ??
      served.defaultPropagation ??
      "Background";
    if (policy === "Orphan") {
      for (const pod of this.store.list("pods", () => true))
        if ((pod.metadata.ownerReferences ?? []).some((o: Json) => o.uid === found.metadata.uid))
          this.store.update("pods", `${pod.metadata.namespace}/${pod.metadata.name}`, (p) => {
            p.metadata.ownerReferences = p.metadata.ownerReferences.filter(
              (o: Json) => o.uid !== found.metadata.uid,
            );
          });
    }
    this.store.remove(resource, key);
    this.effects.push(`delete ${served.kind.toLowerCase()} ${key} ${policy}`);
    this.json(res, 200, { ...this.store.typeOf(resource), ...clone(found) });
    this.collectGarbage(namespace);
  }

  /** A headless Service (clusterIP None) may have no ports; any other needs some. */
  private createServiceRoute(namespace: string, body: Json, res: ServerResponse) {
    const name = body.metadata?.name as string | undefined;
    if (!name || !/^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(name) || name.length > 63)
      return this.status(
        res,
        422,
        "Invalid",
        `Service "${name}" is invalid: metadata.name: Invalid value: "${name}": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character`,
      );
    const spec = body.spec ?? {};
    if (spec.clusterIP !== "None" && !(spec.ports?.length > 0))
      return this.status(res, 422, "Invalid", `Service "${name}" is invalid: spec.ports: Required value`);
    for (const owner of (body.metadata?.ownerReferences ?? []) as Json[])
      if (!owner.uid || !owner.name || !owner.kind || !owner.apiVersion)
        return this.status(
          res,
          422,
          "Invalid",
          `Service "${name}" is invalid: metadata.ownerReferences: Required value`,
        );
    const key = `${namespace}/${name}`;
    if (this.store.get("services", key))
      return this.status(res, 409, "AlreadyExists", `services "${name}" already exists`);
    this.created.push(clone(body));
    const object = clone(body);
    delete object.kind;
    delete object.apiVersion;
    object.metadata = { ...object.metadata, namespace };
    const created = this.store.create("services", key, object);
    this.effects.push(`create service ${key}`);
    this.json(res, 201, { kind: "Service", apiVersion: "v1", ...created });
    // An owner already gone when its dependent was created: the collector removes the dependent.
    this.collectGarbage(namespace);
  }

  private patchServiceRoute(key: string, service: Json, body: Json | null, res: ServerResponse) {
    if (!Array.isArray(body))
      return this.status(res, 400, "BadRequest", "the patch is not a JSON Patch array");
    const next = clone(service);
    const failed = applyJsonPatch(next, body as JsonPatchOp[]);
    if (failed) return this.status(res, 422, "Invalid", failed);
    const updated = this.store.update("services", key, (s) => {
      s.metadata = { ...next.metadata, resourceVersion: s.metadata.resourceVersion, uid: s.metadata.uid };
      s.spec = next.spec;
    });
    this.effects.push(`patch service ${key}`);
    this.json(res, 200, { kind: "Service", apiVersion: "v1", ...clone(updated) });
    this.collectGarbage(updated.metadata.namespace);
  }

  /**
   * A container's log, as the kubelet serves it: 400 while the container has not started (or for
   * `previous`, which this fake keeps none of), the lines since `sinceSeconds`, the last
   * `tailLines`, RFC 3339 timestamps in front; `follow` keeps the response open, sending lines as
   * they are written, and ends it when the pod has finished or is gone.
   */
  private logRoute(namespace: string, name: string, url: URL, res: ServerResponse) {
    const pod = this.pod(namespace, name);
    if (!pod) return this.status(res, 404, "NotFound", `pods "${name}" not found`);
    const names = ((pod.spec.containers ?? []) as Json[]).map((c) => c.name as string);
    const container = url.searchParams.get("container") ?? (names.length === 1 ? names[0]! : null);
    if (!container)
      return this.status(
        res,
        400,
        "BadRequest",
        `a container name must be specified for pod ${name}, choose one of: [${names.join(" ")}]`,
      );
    if (!names.includes(container))
      return this.status(res, 400, "BadRequest", `container ${container} is not valid for pod ${name}`);
    if (url.searchParams.get("previous") === "true")
      return this.status(
        res,
        400,
        "BadRequest",
        `previous terminated container "${container}" in pod "${name}" not found`,
      );
    const phase = pod.status?.phase;
    if (!pod.spec.nodeName || (phase === "Pending" && !this.logs.has(`${namespace}/${name}/${container}`)))
      return this.status(
        res,
        400,
        "BadRequest",
        `container "${container}" in pod "${name}" is waiting to start: ContainerCreating`,
      );
    const key = `${namespace}/${name}/${container}`;
    const since = url.searchParams.get("sinceSeconds");
    const after = since === null ? -Infinity : Date.now() - Number(since) * 1000;
    const tail = url.searchParams.get("tailLines");
    const stamped = url.searchParams.get("timestamps") === "true";
    const text = (l: LogLine) => `${stamped ? `${l.at.toISOString()} ` : ""}${l.text}\n`;
    let lines = (this.logs.get(key) ?? []).filter((l) => +l.at >= after);
    if (tail !== null) lines = Number(tail) > 0 ? lines.slice(-Number(tail)) : [];
    res.writeHead(200, { "content-type": "text/plain", "transfer-encoding": "chunked" });
    res.write(lines.map(text).join(""));
    if (url.searchParams.get("follow") !== "true") return res.end();
    let sent = (this.logs.get(key) ?? []).length;
    const wake = () => {
      const all = this.logs.get(key) ?? [];
      if (all.length > sent) res.write(all.slice(sent).map(text).join(""));
      sent = all.length;
      const now = this.pod(namespace, name);
      if (!now || now.status?.phase === "Succeeded" || now.status?.phase === "Failed") stop();
    };
    const stop = () => {
      this.followers.delete(wake);
      res.end();
    };
    this.followers.add(wake);
    res.on("close", () => this.followers.delete(wake));
  }

  private collection(resource: Resource, url: URL, res: ServerResponse, watch: boolean, namespace?: string) {
    const byField = fieldSelector(url.searchParams.get("fieldSelector"));
    const byLabel = labelSelector(url.searchParams.get("labelSelector"));
    const matches = (o: Json) =>
      byField(o) && byLabel(o) && (namespace === undefined || o.metadata?.namespace === namespace);
    const type = this.store.typeOf(resource);
    if (!watch) {
      return this.json(res, 200, {
        kind: `${type.kind}List`,
        apiVersion: type.apiVersion,
        metadata: { resourceVersion: String(this.store.resourceVersion) },
        items: this.store.list(resource, matches),
      });
    }
    const rvParam = url.searchParams.get("resourceVersion");
    const from = rvParam ? Number(rvParam) : null;
    if (from !== null && from !== 0 && from < this.store.oldestResumable) {
      const message = `too old resource version: ${from} (${this.store.oldestResumable})`;
      if (this.goneAs === "http") return this.status(res, 410, "Expired", message);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(`${JSON.stringify({ type: "ERROR", object: statusObject(410, "Expired", message) })}\n`);
      return;
    }
    res.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" });
    res.flushHeaders(); // as the API server does: the client sees the watch open before any event
    const write = (event: { type: string; object: Json }) => res.write(`${JSON.stringify(event)}\n`);
    const watcher: Watcher = {
      resource,
      matches,
      send: (event: StoredEvent) => write({ type: event.type, object: event.object }),
      close: () => {
        this.store.watchers.delete(watcher);
        res.end();
      },
    };
    // No version: the current state as ADDED events first (what the API server does).
    if (from === null || from === 0) {
      for (const object of this.store.list(resource, matches)) {
        write({ type: "ADDED", object: { ...type, ...object } });
      }
    } else {
      for (const event of this.store.since(resource, from)) if (matches(event.object)) watcher.send(event);
    }
    this.store.watchers.add(watcher);
    res.on("close", () => this.store.watchers.delete(watcher));
    const timeout = Number(url.searchParams.get("timeoutSeconds") ?? 0);
    if (timeout > 0) setTimeout(() => watcher.close(), timeout * 1000).unref();
  }

  private createPodRoute(namespace: string, body: Json, res: ServerResponse) {
    const name = body.metadata?.name;
    if (!name || !Array.isArray(body.spec?.containers) || body.spec.containers.length === 0) {
      return this.status(
        res,
        422,
        "Invalid",
        "Pod is invalid: metadata.name and spec.containers are required",
      );
    }
    if (this.pod(namespace, name))
      return this.status(res, 409, "AlreadyExists", `pods "${name}" already exists`);
    this.created.push(clone(body));
    const created = this.store.create("pods", `${namespace}/${name}`, newPod(body, namespace));
    this.effects.push(`create ${namespace}/${name}`);
    this.json(res, 201, { kind: "Pod", apiVersion: "v1", ...created });
  }

  private readPodRoute(namespace: string, name: string, res: ServerResponse) {
    const pod = this.pod(namespace, name);
    if (!pod) return this.status(res, 404, "NotFound", `pods "${name}" not found`);
    this.json(res, 200, { kind: "Pod", apiVersion: "v1", ...clone(pod) });
  }

  /** DeleteOptions: preconditions.uid must match (409 Conflict otherwise). */
  private deletePodRoute(namespace: string, name: string, body: Json, res: ServerResponse) {
    const pod = this.pod(namespace, name);
    if (!pod) return this.status(res, 404, "NotFound", `pods "${name}" not found`);
    const uid = body.preconditions?.uid;
    if (uid && uid !== pod.metadata.uid) {
      return this.status(
        res,
        409,
        "Conflict",
        `Operation cannot be fulfilled on Pod "${name}": Precondition failed: UID in precondition: ${uid}, UID in object meta: ${pod.metadata.uid}`,
      );
    }
    this.removePod(namespace, name);
    this.effects.push(`delete ${namespace}/${name}`);
    this.json(res, 200, { kind: "Pod", apiVersion: "v1", ...clone(pod) });
  }

  /**
   * A JSON Patch (RFC 6902) of a pod. On a pod that exists, a real API server lets a client change
   * its labels and annotations (and a few spec fields fleetq never touches): this fake takes "add",
   * "replace" and "remove" under /metadata/labels and /metadata/annotations and refuses anything
   * else as a real server refuses a forbidden pod update (422).
   */
  private patchPodRoute(namespace: string, name: string, body: Json | null, res: ServerResponse) {
    const pod = this.pod(namespace, name);
    if (!pod) return this.status(res, 404, "NotFound", `pods "${name}" not found`);
    if (!Array.isArray(body))
      return this.status(res, 400, "BadRequest", "the patch is not a JSON Patch array");
    const ops = body as { op?: string; path?: string; value?: unknown }[];
    const segment = (s: string) => s.replace(/~1/g, "/").replace(/~0/g, "~");
    for (const op of ops) {
      const m = /^\/metadata\/(labels|annotations)(?:\/([^/]+))?$/.exec(op.path ?? "");
      if (!m || !["add", "replace", "remove"].includes(op.op ?? ""))
        return this.status(
          res,
          422,
          "Invalid",
          `Pod "${name}" is invalid: spec: Forbidden: pod updates may not change fields other than labels and annotations (${op.op} ${op.path})`,
        );
    }
    const next = clone(pod);
    for (const op of ops) {
      const [, field, key] = /^\/metadata\/(labels|annotations)(?:\/([^/]+))?$/.exec(op.path!)!;
      const meta = next.metadata as Record<string, Record<string, string> | undefined>;
      if (key === undefined) {
        if (op.op === "remove") delete meta[field!];
        else meta[field!] = { ...(op.value as Record<string, string>) };
        continue;
      }
      const map = meta[field!];
      if (!map) return this.status(res, 422, "Invalid", `the patch path ${op.path} does not exist`);
      if (op.op === "remove" || op.op === "replace") {
        if (!(segment(key) in map))
          return this.status(res, 422, "Invalid", `the patch path ${op.path} does not exist`);
      }
      if (op.op === "remove") delete map[segment(key)];
      else map[segment(key)] = String(op.value);
    }
    const updated = this.store.update("pods", `${namespace}/${name}`, (p) => {
      p.metadata.labels = next.metadata.labels;
      p.metadata.annotations = next.metadata.annotations;
    });
    this.effects.push(`patch ${namespace}/${name}`);
    this.json(res, 200, { kind: "Pod", apiVersion: "v1", ...clone(updated) });
  }

  private bindingRoute(namespace: string, name: string, body: Json, res: ServerResponse) {
    const pod = this.pod(namespace, name);
    if (!pod) return this.status(res, 404, "NotFound", `pods "${name}" not found`);
    const node = body.target?.name;
    if (!node) return this.status(res, 422, "Invalid", "Binding is invalid: target.name is required");
    // As the API server: a Binding naming a uid binds only the pod of that uid (a precondition).
    const uid = body.metadata?.uid;
    if (uid && uid !== pod.metadata.uid)
      return this.status(
        res,
        409,
        "Conflict",
        `Operation cannot be fulfilled on pods/binding "${name}": Precondition failed: UID in precondition: ${uid}, UID in object meta: ${pod.metadata.uid}`,
      );
    if (pod.spec.nodeName) {
      return this.status(
        res,
        409,
        "Conflict",
        `Operation cannot be fulfilled on pods/binding "${name}": pod ${name} is already assigned to node "${pod.spec.nodeName}"`,
      );
    }
    this.store.update("pods", `${namespace}/${name}`, (p) => {
      p.spec.nodeName = node;
      // The API server copies the Binding's annotations onto the pod.
      p.metadata.annotations = { ...p.metadata.annotations, ...body.metadata?.annotations };
      p.status.conditions = [{ type: "PodScheduled", status: "True" }];
    });
    this.effects.push(`bind ${namespace}/${name} ${node}`);
    if (this.autoRun) this.setPodPhase(namespace, name, "Running");
    this.json(res, 201, { ...statusObject(201, "", ""), status: "Success" });
  }

  private evictionRoute(namespace: string, name: string, res: ServerResponse) {
    const pod = this.pod(namespace, name);
    if (!pod) return this.status(res, 404, "NotFound", `pods "${name}" not found`);
    // Graceful deletion: marked terminating, then gone once the kubelet has stopped it.
    this.store.update("pods", `${namespace}/${name}`, (p) => {
      p.metadata.deletionTimestamp = new Date().toISOString();
      p.metadata.deletionGracePeriodSeconds = 30;
    });
    this.removePod(namespace, name);
    this.effects.push(`evict ${namespace}/${name}`);
    this.json(res, 201, { ...statusObject(201, "", ""), status: "Success" });
  }

  private json(res: ServerResponse, code: number, body: Json) {
    res.writeHead(code, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  }

  private status(res: ServerResponse, code: number, reason: string, message: string) {
    this.json(res, code, statusObject(code, reason, message));
  }
}

interface LogLine {
  at: Date;
  text: string;
}

interface JsonPatchOp {
  op?: string;
  path?: string;
  value?: unknown;
}

/** Applies a JSON Patch (RFC 6902: add, replace, remove, test) to `doc` in place; the message of
 * the first operation that fails (as the API server's 422 says it), or null. */
function applyJsonPatch(doc: Json, ops: readonly JsonPatchOp[]): string | null {
  for (const op of ops) {
    const path = (op.path ?? "")
      .split("/")
      .slice(1)
      .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
    if (!path.length) return `the patch path "${op.path}" is not valid`;
    const last = path.pop()!;
    let parent: unknown = doc;
    for (const key of path) parent = (parent as Json | undefined)?.[key];
    if (parent === null || typeof parent !== "object")
      return `doc is missing path: "${op.path}": missing value`;
    const target = parent as Json;
    if (op.op === "test") {
      if (JSON.stringify(target[last]) !== JSON.stringify(op.value))
        return `the server rejected our request due to an error in our request: testing value ${op.path} failed`;
    } else if (op.op === "add" && Array.isArray(target)) {
      if (last === "-") target.push(op.value);
      else target.splice(Number(last), 0, op.value);
    } else if (op.op === "add" || op.op === "replace") {
      if (op.op === "replace" && !(last in target)) return `doc is missing key: ${op.path}: missing value`;
      target[last] = op.value;
    } else if (op.op === "remove") {
      if (!(last in target)) return `doc is missing key: ${op.path}: missing value`;
      if (Array.isArray(target)) target.splice(Number(last), 1);
      else delete target[last];
    } else return `Unexpected kind: ${op.op}`;
  }
  return null;
}

function statusObject(code: number, reason: string, message: string): Json {
  return { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, code };
}

function newPod(pod: Json, namespace: string): Json {
  const next = clone(pod);
  delete next.kind;
  delete next.apiVersion;
  next.metadata = { ...next.metadata, namespace };
  next.spec = { schedulerName: "default-scheduler", ...next.spec };
  next.status = { phase: "Pending", qosClass: "Burstable" };
  return next;
}

function resources(shape: NodeShape): Record<string, string> {
  return {
    cpu: shape.cpu ?? "8",
    memory: shape.memory ?? "32Gi",
    pods: "110",
    ...(shape.gpus ? { "nvidia.com/gpu": String(shape.gpus) } : {}),
  };
}

/** Equality field selectors ("spec.schedulerName=fleetq,status.phase!=Failed"). */
function fieldSelector(selector: string | null): (object: Json) => boolean {
  if (!selector) return () => true;
  const terms = selector.split(",").map((term) => {
    const match = /^([^!=]+)(==|=|!=)(.*)$/.exec(term)!;
    return { path: match[1]!.split("."), negate: match[2] === "!=", value: match[3] };
  });
  return (object) =>
    terms.every((term) => {
      const value = term.path.reduce<unknown>((at, key) => (at as Json | undefined)?.[key], object);
      return (String(value ?? "") === term.value) !== term.negate;
    });
}

/** Label selectors of equality and existence ("a=b,c!=d,e,!f"). */
function labelSelector(selector: string | null): (object: Json) => boolean {
  if (!selector) return () => true;
  const terms = selector.split(",").map((term) => {
    const match = /^(!?)([^!=]+)(?:(==|=|!=)(.*))?$/.exec(term.trim());
    if (!match) throw new Error(`fake kube: unsupported label selector ${term}`);
    return { absent: match[1] === "!", key: match[2]!, op: match[3], value: match[4] };
  });
  return (object) => {
    const labels = (object.metadata?.labels ?? {}) as Record<string, string>;
    return terms.every((t) => {
      if (!t.op) return t.absent !== t.key in labels;
      return (labels[t.key] === t.value) !== (t.op === "!=");
    });
  };
}

async function readJson(req: IncomingMessage): Promise<Json> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? (JSON.parse(text) as Json) : {};
}
