// `fleetq submit job.yaml`: a YAML file whose keys are the fields of the API's SubmitJobInput
// (docs/job-spec.md). The API validates the spec; here only what must be settled before
// sending it: the file parses, it is a mapping, command-line overrides, cpu quantities.
import { readFileSync } from "node:fs";
import { CliError } from "./exit-codes.js";
import { lazyRequire } from "./lazy.js";

const yaml = lazyRequire<typeof import("yaml")>("yaml");

export interface SpecOverrides {
  queue?: string;
  cluster?: string;
  name?: string;
  idempotencyKey?: string;
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
  const spec: unknown = doc.toJS();
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
  for (const field of ["name", "queue"] as const) {
    if (input[field] === undefined || input[field] === null || input[field] === "") {
      const flag = field === "queue" ? " (or pass --queue)" : " (or pass --name)";
      throw new CliError(`${file}: field ${field} is required${flag}`);
    }
  }
  if (!Array.isArray(input.tasks) || input.tasks.length === 0) {
    throw new CliError(`${file}: field tasks is required: a list of task groups (name, replicas, resources)`);
  }
  const warnings: string[] = [];
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
    return t;
  });
  return { input, warnings };
}

/** Reads the file ("-" = standard input). */
export function loadJobSpec(path: string, overrides: SpecOverrides = {}): LoadedSpec {
  let text: string;
  try {
    text = readFileSync(path === "-" ? 0 : path, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new CliError(
      `cannot read job spec ${path}: ${code === "ENOENT" ? "no such file" : (e as Error).message}`,
    );
  }
  return parseJobSpec(text, path === "-" ? "<stdin>" : path, overrides);
}

/** The API's field paths are "input.tasks[0]…": name them as fields of the file. */
export function specFieldOf(apiField: string | undefined): string | undefined {
  return apiField?.replace(/^input\.?/, "") || undefined;
}
