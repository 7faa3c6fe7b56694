// A job's clusterSelector against a cluster's labels: every entry must hold (label key In values).
import type { LabelMatch } from "../../src/store/index.js";

export const matchesSelector = (labels: Record<string, string>, selector: readonly LabelMatch[]): boolean =>
  selector.every((m) => labels[m.key] !== undefined && m.values.includes(labels[m.key]!));

export const describeSelector = (selector: readonly LabelMatch[]): string =>
  selector.map((m) => `${m.key} in (${m.values.join(", ")})`).join(", ");
