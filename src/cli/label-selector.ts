// `-l pipeline=123,stage=test`: a label selector as kubectl writes one, here the equality form
// only — each `key=value` (or `key==value`) must hold. The API checks the label syntax.
import { CliError } from "./exit-codes.js";

export interface LabelMatch {
  key: string;
  values: string[];
}

export function parseLabelSelector(text: string, flag = "--selector"): LabelMatch[] {
  const matches: LabelMatch[] = [];
  for (const part of text.split(",")) {
    const term = part.trim();
    const m = /^([^=!\s]+)\s*==?\s*([^=\s]*)$/.exec(term);
    if (!m) throw new CliError(`${flag}: "${term}" is not key=value (example: -l pipeline=123,stage=test)`);
    matches.push({ key: m[1]!, values: [m[2]!] });
  }
  return matches;
}

/** Several -l options: every term of every one must hold. */
export function parseLabelSelectors(texts: readonly string[] | undefined, flag = "--selector"): LabelMatch[] {
  return (texts ?? []).flatMap((t) => parseLabelSelector(t, flag));
}

export const formatLabels = (labels: readonly { key: string; value: string }[]): string =>
  labels.map((l) => `${l.key}=${l.value}`).join(",");
