// Reads a YAML file against a zod schema; every failure names the file and the field,
// so a bad cluster or agent config file says exactly what to fix.
import { readFile } from "node:fs/promises";
import { parse } from "yaml";
import type { z } from "zod";

export class ConfigFileError extends Error {
  override name = "ConfigFileError";
  constructor(
    readonly file: string,
    readonly field: string | null,
    detail: string,
  ) {
    super(field ? `${file}: field ${field}: ${detail}` : `${file}: ${detail}`);
  }
}

export async function readYamlFile<S extends z.ZodType>(file: string, schema: S): Promise<z.output<S>> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new ConfigFileError(file, null, `cannot read: ${(err as Error).message}`);
  }
  return parseYaml(file, text, schema);
}

export function parseYaml<S extends z.ZodType>(file: string, text: string, schema: S): z.output<S> {
  let data: unknown;
  try {
    data = parse(text);
  } catch (err) {
    throw new ConfigFileError(file, null, `not valid YAML: ${(err as Error).message}`);
  }
  const result = schema.safeParse(data ?? {});
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const field = issue.path.length > 0 ? issue.path.map(String).join(".") : null;
    throw new ConfigFileError(file, field, issue.message);
  }
  return result.data;
}
