// createWebhook's input: where to send, which events, which jobs.
import { z } from "zod";
import { WEBHOOK_EVENTS } from "../domain/webhooks.js";
import { jobLabelMatches, queueName } from "./names.js";
import { parseInput } from "./parse.js";

const webhookUrl = z
  .string({ error: "url must be a string" })
  .trim()
  .max(2048, "url must be at most 2048 characters")
  .superRefine((raw, ctx) => {
    const problem = urlProblem(raw);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

/** Why the URL cannot be a webhook's target, or null. */
function urlProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `"${raw}" is not a URL`;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    return `the scheme must be http or https, not ${url.protocol.replace(/:$/, "")}`;
  if (url.username || url.password) return "must not carry a user name or password";
  return null;
}

export const webhookInput = z
  .object({
    url: webhookUrl,
    events: z
      .array(z.enum(WEBHOOK_EVENTS, `events must be among ${WEBHOOK_EVENTS.join(", ")}`))
      .min(1, "events must name at least one event"),
    queues: z.array(queueName).max(100, "at most 100 queues").nullish(),
    labels: jobLabelMatches.nullish(),
    allowPrivateTargets: z.boolean().nullish(),
  })
  .strict();
export type WebhookInput = z.input<typeof webhookInput>;

export type ParsedWebhookInput = z.output<typeof webhookInput>;

/** The input checked (InvalidInputError naming the field), before anything else is asked of it. */
export const parseWebhookInput = (input: WebhookInput): ParsedWebhookInput => parseInput(webhookInput, input);
