// A rendered pod's container as the kubelet starts it: its environment (envFrom ConfigMaps and
// Secrets, then env — values, ConfigMap, Secret and downward-API references, $(VAR) expanded), its
// argv (the container's command and args over the image's ENTRYPOINT and CMD, as Kubernetes
// combines them), and the ports and HTTP probes it declares. A form not implemented here is
// refused, so that a manifest growing one fails its tests until this learns it.
import type { K8sObject } from "./kustomize.js";

/** Secret values by Secret name, then key. */
export type Secrets = Record<string, Record<string, string>>;

function configMap(objects: K8sObject[], name: string): K8sObject | undefined {
  return objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === name);
}

/**
 * A container's environment entries, later ones winning: envFrom's ConfigMaps (from the rendered
 * objects) and Secrets (from `secrets`; an optional one absent there is left out), then env.
 */
export function envEntries(
  objects: K8sObject[],
  c: K8sObject,
  secrets: Secrets = {},
): Map<string, K8sObject> {
  const env = new Map<string, K8sObject>();
  for (const from of c.envFrom ?? []) {
    if (from.prefix) throw new Error(`${c.name}: envFrom with a prefix is not implemented`);
    const ref = from.configMapRef ?? from.secretRef;
    const data = from.configMapRef ? configMap(objects, ref.name)?.data : secrets[ref.name];
    if (!data) {
      if (ref.optional) continue;
      throw new Error(
        `${c.name}: envFrom ${from.configMapRef ? "ConfigMap" : "Secret"} ${ref.name} not given`,
      );
    }
    for (const [name, value] of Object.entries(data)) env.set(name, { name, value: String(value) });
  }
  for (const e of c.env ?? []) env.set(e.name, e);
  return env;
}

/** Kubernetes' $(VAR) expansion: a defined variable's value, $$ for $, anything else left as written. */
export function expand(text: string, env: Record<string, string>): string {
  return text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole, name?: string) =>
    name === undefined ? "$" : (env[name] ?? whole),
  );
}

/**
 * The environment the container's process gets: its entries resolved, Secret references from
 * `secrets` (an optional one absent there is left out), downward-API fields from `fields`
 * (by fieldPath), ConfigMap references from the rendered objects.
 */
export function containerEnv(
  objects: K8sObject[],
  c: K8sObject,
  given: { secrets: Secrets; fields: Record<string, string> },
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, e] of envEntries(objects, c, given.secrets)) {
    const value = resolveEntry(objects, c, e, given);
    if (value !== undefined) out[name] = expand(value, out);
  }
  return out;
}

function resolveEntry(
  objects: K8sObject[],
  c: K8sObject,
  e: K8sObject,
  given: { secrets: Secrets; fields: Record<string, string> },
): string | undefined {
  if (!e.valueFrom) return String(e.value ?? "");
  const { secretKeyRef, configMapKeyRef, fieldRef } = e.valueFrom;
  const ref = secretKeyRef ?? configMapKeyRef;
  if (ref) {
    const data = secretKeyRef ? given.secrets[ref.name] : configMap(objects, ref.name)?.data;
    const value = data?.[ref.key];
    if (value === undefined && !ref.optional) {
      throw new Error(`${c.name}: ${e.name} refers to ${ref.name}/${ref.key}, which is not given`);
    }
    return value;
  }
  if (fieldRef) {
    const value = given.fields[fieldRef.fieldPath];
    if (value === undefined)
      throw new Error(`${c.name}: ${e.name}: no value for the field ${fieldRef.fieldPath}`);
    return value;
  }
  throw new Error(`${c.name}: ${e.name}: this valueFrom is not implemented`);
}

/** The process a container runs: command replaces the ENTRYPOINT (and the CMD), args the CMD. */
export function containerArgv(
  image: { entrypoint: string[]; cmd: string[] },
  c: K8sObject,
  env: Record<string, string>,
): string[] {
  const argv = c.command
    ? [...c.command, ...(c.args ?? [])]
    : [...image.entrypoint, ...(c.args ?? image.cmd)];
  return argv.map((a: string) => expand(a, env));
}

/** A port of the container, by number or by the name it declares. */
export function containerPort(c: K8sObject, port: number | string): number {
  if (typeof port === "number") return port;
  const found = (c.ports ?? []).find((p: K8sObject) => p.name === port);
  if (!found) throw new Error(`${c.name}: no port named ${port}`);
  return found.containerPort;
}

/** An HTTP probe's scheme, port and path; another kind of probe, a host or headers are not implemented. */
export function httpProbe(c: K8sObject, probe: K8sObject): { scheme: string; port: number; path: string } {
  const get = probe.httpGet;
  const unknown = Object.keys(get ?? {}).filter((k) => !["path", "port", "scheme"].includes(k));
  if (!get || unknown.length)
    throw new Error(`${c.name}: only httpGet probes with a path and a port are implemented`);
  return {
    scheme: (get.scheme ?? "HTTP").toLowerCase(),
    port: containerPort(c, get.port),
    path: get.path ?? "/",
  };
}
