// Pod Security Standards for task templates: pure (no I/O), so a template is judged the same
// at submit, in tests and anywhere else.
import { BASELINE_CHECKS, RESTRICTED_CHECKS, type Violation } from "./checks.js";
import { podView } from "./template.js";

export const POD_SECURITY_LEVELS = ["PRIVILEGED", "BASELINE", "RESTRICTED"] as const;
export type PodSecurityLevel = (typeof POD_SECURITY_LEVELS)[number];
export const DEFAULT_POD_SECURITY: PodSecurityLevel = "BASELINE";

export type { Violation } from "./checks.js";

/** The first field of the template that breaks the level, or null. */
export function podSecurityViolation(template: unknown, level: PodSecurityLevel): Violation | null {
  if (level === "PRIVILEGED" || template === null || template === undefined) return null;
  const pod = podView(template);
  if (!pod)
    return {
      control: "Template",
      path: [],
      message: "a pod template must be an object (a Pod or a PodSpec)",
    };
  for (const check of level === "RESTRICTED" ? RESTRICTED_CHECKS : BASELINE_CHECKS) {
    const v = check(pod);
    if (v) return v;
  }
  return null;
}
