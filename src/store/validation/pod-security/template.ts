// A task's pod template seen as the Pod Security Standards see a pod: its spec, its metadata
// and every container (containers, initContainers, ephemeralContainers), each with the path of
// where it sits in the template, so a refusal can name the exact field.
export type Json = Record<string, unknown>;
export type Path = readonly PropertyKey[];

export interface ContainerAt {
  container: Json;
  path: Path;
}

export interface PodView {
  spec: Json;
  specPath: Path;
  metadata: Json;
  metadataPath: Path;
  containers: ContainerAt[];
}

export const isObject = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);

/** `v` as an object, or an empty one (absent or malformed sub-objects restrict nothing here:
 * the API server refuses malformed pods). */
export const obj = (v: unknown): Json => (isObject(v) ? v : {});

export const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

const CONTAINER_LISTS = ["containers", "initContainers", "ephemeralContainers"] as const;

/** The template is a Pod (with `spec`) or just a PodSpec, as the agent reads it. Null when it is
 * not an object at all. */
export function podView(template: unknown): PodView | null {
  if (!isObject(template)) return null;
  const isPod = "spec" in template;
  const spec = isPod ? obj(template.spec) : template;
  const specPath: Path = isPod ? ["spec"] : [];
  const containers: ContainerAt[] = [];
  for (const key of CONTAINER_LISTS) {
    list(spec[key]).forEach((c, i) => {
      if (isObject(c)) containers.push({ container: c, path: [...specPath, key, i] });
    });
  }
  return {
    spec,
    specPath,
    metadata: isPod ? obj(template.metadata) : {},
    metadataPath: ["metadata"],
    containers,
  };
}

/** Windows pods are exempt from the Linux-only restricted controls, as the standard says. */
export const isWindows = (pod: PodView): boolean => obj(pod.spec.os).name === "windows";

/** Set and neither false nor null: what "must be unset or false" forbids. */
export const isSetTrue = (v: unknown): boolean => v !== undefined && v !== null && v !== false;
