// Names that end up in Kubernetes objects, Redis keys and BullMQ queue names follow the
// Kubernetes DNS-label rule: lowercase letters, digits and '-', alphanumeric at both ends.
import { z } from "zod";

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export const dnsLabel = (what: string, max = 63) =>
  z
    .string({ error: `${what} must be a string` })
    .min(1, `${what} must not be empty`)
    .max(max, `${what} must be at most ${max} characters`)
    .regex(
      DNS_LABEL,
      `${what} must be lowercase letters, digits and '-', starting and ending with a letter or digit`,
    );

/** Queue names may also use '.' and '_' (org.dept_team): they never become Kubernetes names. */
export const queueName = z
  .string({ error: "queue name must be a string" })
  .min(1, "queue name must not be empty")
  .max(100, "queue name must be at most 100 characters")
  .regex(
    /^[A-Za-z0-9]([-A-Za-z0-9._]*[A-Za-z0-9])?$/,
    "queue name must be letters, digits, '-', '.' or '_', starting and ending with a letter or digit",
  );

export const clusterName = dnsLabel("cluster name");

/** A node label key or value as Kubernetes allows them (loosely: non-empty, no whitespace). */
export const labelKey = z
  .string()
  .min(1, "label key must not be empty")
  .max(317, "label key is too long")
  .regex(/^\S+$/, "label key must not contain whitespace");

export const labelValue = z.string().max(63, "label value must be at most 63 characters");

export const labelInputs = z
  .array(z.object({ key: labelKey, value: labelValue }).strict())
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((l, i) => {
      if (seen.has(l.key))
        ctx.addIssue({ code: "custom", message: `duplicate label key "${l.key}"`, path: [i, "key"] });
      seen.add(l.key);
    });
  });

export const labelMatches = z.array(
  z
    .object({
      key: labelKey,
      values: z.array(labelValue).min(1, "values must list at least one value"),
    })
    .strict(),
);

export type LabelMatch = z.output<typeof labelMatches>[number];

export const labelsToRecord = (list: readonly { key: string; value: string }[]): Record<string, string> =>
  Object.fromEntries(list.map((l) => [l.key, l.value]));
