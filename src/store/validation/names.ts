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

// Job labels follow Kubernetes' label syntax exactly (they may become pod labels, and CI tools
// expect it): a key is an optional DNS-subdomain prefix and "/", then a name of at most 63
// characters — letters, digits, '-', '_' and '.', alphanumeric at both ends; a value is empty or
// such a name.
const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_NAME_RULE = "letters, digits, '-', '_' or '.', starting and ending with a letter or digit";

export const MAX_JOB_LABELS = 64;

export const kubernetesLabelKey = z
  .string({ error: "label key must be a string" })
  .superRefine((key, ctx) => {
    const slash = key.lastIndexOf("/");
    const prefix = slash >= 0 ? key.slice(0, slash) : null;
    const name = slash >= 0 ? key.slice(slash + 1) : key;
    const problem =
      prefix !== null && (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))
        ? `label key prefix "${prefix}" must be a DNS subdomain (lowercase letters, digits, '-' and '.', at most 253 characters)`
        : name.length === 0
          ? "label key must not be empty"
          : name.length > 63
            ? "label key name (after any prefix/) must be at most 63 characters"
            : !LABEL_NAME.test(name)
              ? `label key "${key}" must be ${LABEL_NAME_RULE} (with an optional DNS-subdomain prefix and '/')`
              : null;
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

export const kubernetesLabelValue = z
  .string({ error: "label value must be a string" })
  .max(63, "label value must be at most 63 characters")
  .refine((v) => v === "" || LABEL_NAME.test(v), `label value must be empty or ${LABEL_NAME_RULE}`);

/** A job's labels: Kubernetes syntax, distinct keys. */
export const jobLabels = z
  .array(z.object({ key: kubernetesLabelKey, value: kubernetesLabelValue }).strict())
  .max(MAX_JOB_LABELS, `a job may have at most ${MAX_JOB_LABELS} labels`)
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((l, i) => {
      if (seen.has(l.key))
        ctx.addIssue({ code: "custom", message: `duplicate label key "${l.key}"`, path: [i, "key"] });
      seen.add(l.key);
    });
  });

/** jobs(filter: { labels }): each match is "key In values"; all must hold. */
export const jobLabelMatches = z
  .array(
    z
      .object({
        key: kubernetesLabelKey,
        values: z
          .array(kubernetesLabelValue)
          .min(1, "values must list at least one value")
          .max(100, "values may list at most 100 values"),
      })
      .strict(),
  )
  .max(20, "at most 20 label matches");
