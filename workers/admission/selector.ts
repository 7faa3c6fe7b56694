// A job's clusterSelector against a cluster's labels: every entry must hold (label key In values).
import type { LabelMatch } from "../../src/store/index.js";

export { matchesSelector } from "../../src/store/index.js";

export const describeSelector = (selector: readonly LabelMatch[]): string =>
  selector.map((m) => `${m.key} in (${m.values.join(", ")})`).join(", ");
