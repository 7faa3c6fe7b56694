// `fleetq submit job.yaml`: a YAML file whose keys are the fields of the API's SubmitJobInput
// (docs/job-spec.md), or Kubernetes manifests (a Job, JobSet, PyTorchJob, MPIJob:
// docs/workloads.md), sent as SubmitWorkloadInput. The API validates them; here only what must be
// settled before sending: the file parses, it is a mapping, command-line overrides, cpu quantities.
import { readFileSync } from "node:fs";
import { CliError } from "./exit-codes.js";
import { lazyRequire } from "./lazy.js";

const yaml = lazyRequire<typeof import("yaml")>("yaml");

export interface SpecOverrides {
  queue?: string;
  cluster?: string;
  name?: string;
  idempotencyKey?: string;
  /** --label key=value: added to every job's labels (replacing a label of the same key). */
  label?: string[];
}

export interface LoadedSpec {
  input: Record<string, unknown>;
  warnings: string[];
}

const CPU_QUANTITY = /^(\d+(?:\.\d+)?)(m?)$/;

/** cpu is millicores (Int) in the API; a string is a Kubernetes quantity ("4", "500m"). */
function cpuMillis(value: unknown, where: string, warnings: string[]): unknown {
  if (typeof value === "number") {
    if (Number.isInteger(value) && value > 0 && value < 100) {
      warnings.push(
        `${where}: cpu ${value} means ${value} millicores (${value / 1000} cores); ` +
          `write cpu: "${value}" or ${value * 1000} for ${value} cores`,
      );
    }
    return value;
  }
  if (typeof value !== "string") return value;
  const m = CPU_QUANTITY.exec(value.trim());
  if (!m) throw new CliError(`${where}: cpu "${value}" is not a quantity (examples: 4000, "4", "500m")`);
  return m[2] ? Math.round(Number(m[1])) : Math.round(Number(m[1]) * 1000);
}

export function parseJobSpec(text: string, file: string, overrides: SpecOverrides = {}): LoadedSpec {
  const doc = yaml().parseDocument(text, { prettyErrors: true });
  if (doc.errors.length) {
    throw new CliError(`${file}: not valid YAML: ${doc.errors[0]!.message.split("\n")[0]}`);
  }
  const warnings: string[] = [];
  return { input: specOf(doc.toJS(), file, overrides, warnings), warnings };
}

export interface LoadedSpecs {
  /** One per YAML document (empty documents are skipped). */
  inputs: Record<string, unknown>[];
  warnings: string[];
  /** The documents are Kubernetes manifests: the inputs are SubmitWorkloadInputs. */
  workloads: boolean;
}

/** A document with apiVersion and kind is a Kubernetes manifest rather than a job spec. */
const isManifest = (v: unknown): boolean =>
  v !== null &&
  typeof v === "object" &&
  typeof (v as Record<string, unknown>).apiVersion === "string" &&
  typeof (v as Record<string, unknown>).kind === "string";

/**
 * A file of one or more job specs (YAML documents separated by `---`: a CI matrix). With several,
 * --name is refused and --idempotency-key KEY gives the i-th document (from 0) the key KEY-i.
 */
export function parseJobSpecs(text: string, file: string, overrides: SpecOverrides = {}): LoadedSpecs {
  const docs = yaml().parseAllDocuments(text, { prettyErrors: true });
  const list = Array.isArray(docs) ? docs : [docs];
  for (const [i, doc] of list.entries()) {
    if (doc.errors.length) {
      const where = list.length > 1 ? `${file}: document ${i + 1}` : file;
      throw new CliError(`${where}: not valid YAML: ${doc.errors[0]!.message.split("\n")[0]}`);
    }
  }
  const values = list.map((d) => d.toJS() as unknown).filter((v) => v !== null && v !== undefined);
  const manifests = values.filter(isManifest).length;
  if (manifests > 0 && manifests < values.length)
    throw new CliError(`${file}: mixes Kubernetes manifests and job specs; submit them from separate files`);
  const workloads = manifests > 0;
  const inputOf = workloads ? workloadInputOf : specOf;
  if (values.length <= 1) {
    const warnings: string[] = [];
    return { inputs: [inputOf(values[0] ?? null, file, overrides, warnings)], warnings, workloads };
  }
  if (overrides.name)
    throw new CliError(`--name names one job; ${file} has ${values.length} documents (set a name in each)`);
  const warnings: string[] = [];
  const inputs = values.map((v, i) =>
    inputOf(
      v,
      `${file}: document ${i + 1}`,
      {
        ...overrides,
        idempotencyKey: overrides.idempotencyKey ? `${overrides.idempotencyKey}-${i}` : undefined,
      },
      warnings,
    ),
  );
  return { inputs, warnings, workloads };
}

/** A manifest as SubmitWorkloadInput: --name is its metadata.name; the queue, when not given,
 * comes from its labels (the API reads them). */
function workloadInputOf(
  manifest: unknown,
  file: string,
  overrides: SpecOverrides,
  _warnings: string[],
): Record<string, unknown> {
  const m = { ...(manifest as Record<string, unknown>) };
  if (overrides.name) {
    const metadata = m.metadata && typeof m.metadata === "object" ? m.metadata : {};
    m.metadata = { ...metadata, name: overrides.name };
  }
  const input: Record<string, unknown> = { manifest: m };
  if (overrides.queue) input.queue = overrides.queue;
  if (overrides.cluster) input.cluster = overrides.cluster;
  if (overrides.idempotencyKey) input.idempotencyKey = overrides.idempotencyKey;
  if (overrides.label?.length) input.labels = withLabels(null, overrides.label, file);
  return input;
}

function specOf(
  spec: unknown,
  file: string,
  overrides: SpecOverrides,
  warnings: string[],
): Record<string, unknown> {
  if (spec === null || typeof spec !== "object" || Array.isArray(spec)) {
    throw new CliError(
      `${file}: a job spec is a YAML mapping with the fields of SubmitJobInput (docs/job-spec.md)`,
    );
  }
  const input = { ...(spec as Record<string, unknown>) };
  if (overrides.queue) input.queue = overrides.queue;
  if (overrides.cluster) input.cluster = overrides.cluster;
  if (overrides.name) input.name = overrides.name;
  if (overrides.idempotencyKey) input.idempotencyKey = overrides.idempotencyKey;
  if (overrides.label?.length) input.labels = withLabels(input.labels, overrides.label, file);
  for (const field of ["name", "queue"] as const) {
    if (input[field] === undefined || input[field] === null || input[field] === "") {
      const flag = field === "queue" ? " (or pass --queue)" : " (or pass --name)";
      throw new CliError(`${file}: field ${field} is required${flag}`);
    }
  }
  if (!Array.isArray(input.tasks) || input.tasks.length === 0) {
    throw new CliError(`${file}: field tasks is required: a list of task groups (name, replicas, resources)`);
  }
  input.tasks = input.tasks.map((task: unknown, i: number) => {
    if (task === null || typeof task !== "object" || Array.isArray(task)) {
      throw new CliError(`${file}: field tasks[${i}] must be a mapping (name, replicas, resources)`);
    }
    const t = { ...(task as Record<string, unknown>) };
    const resources = t.resources;
    if (resources && typeof resources === "object" && !Array.isArray(resources) && "cpu" in resources) {
      t.resources = {
        ...resources,
        cpu: cpuMillis(
          (resources as { cpu: unknown }).cpu,
          `${file}: field tasks[${i}].resources.cpu`,
          warnings,
        ),
      };
    }
    // YAML reads `quantity: 2` as a number; the API takes a quantity's text.
    if (Array.isArray(t.extendedResources))
      t.extendedResources = t.extendedResources.map((r: unknown) =>
        r && typeof r === "object" && typeof (r as { quantity?: unknown }).quantity === "number"
          ? { ...r, quantity: String((r as { quantity: number }).quantity) }
          : r,
      );
    return t;
  });
  return input;
}

/** Reads the file ("-" = standard input): one job spec or several. */
export function loadJobSpecs(path: string, overrides: SpecOverrides = {}): LoadedSpecs {
  return parseJobSpecs(readSpecFile(path), path === "-" ? "<stdin>" : path, overrides);
}

function readSpecFile(path: string): string {
  try {
    return readFileSync(path === "-" ? 0 : path, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new CliError(
      `cannot read job spec ${path}: ${code === "ENOENT" ? "no such file" : (e as Error).message}`,
    );
  }
}

/** Reads the file ("-" = standard input). */
export function loadJobSpec(path: string, overrides: SpecOverrides = {}): LoadedSpec {
  return parseJobSpec(readSpecFile(path), path === "-" ? "<stdin>" : path, overrides);
}

/** The API's field paths are "input.tasks[0]…" ("input.manifest.spec…" for a manifest): name
 * them as fields of the file. */
export function specFieldOf(apiField: string | undefined): string | undefined {
  return apiField?.replace(/^input\.?/, "").replace(/^manifest\.?/, "") || undefined;
}

/** submitJobs' field paths are "inputs[2].tasks[0]…": the document (from 1) and its field. */
export function batchFieldOf(
  apiField: string | undefined,
): { document: number; field: string | undefined } | null {
  const m = /^inputs\[(\d+)\]\.?(?:manifest\.?)?(.*)$/.exec(apiField ?? "");
  return m ? { document: Number(m[1]) + 1, field: m[2] || undefined } : null;
}

/** The file's labels with those of --label key=value added (a key given again is replaced). */
function withLabels(labels: unknown, extra: readonly string[], file: string): unknown {
  if (labels != null && !Array.isArray(labels)) return labels; // the API names the field
  const out = new Map<string, unknown>();
  for (const l of (labels as unknown[] | null) ?? []) {
    const key = (l as { key?: unknown } | null)?.key;
    out.set(typeof key === "string" ? key : `\u0000${out.size}`, l);
  }
  for (const term of extra) {
    const eq = term.indexOf("=");
    if (eq <= 0) throw new CliError(`--label: "${term}" is not key=value (${file})`);
    out.set(term.slice(0, eq), { key: term.slice(0, eq), value: term.slice(eq + 1) });
  }
  return [...out.values()];
}
