// `fleetq webhook create|list|delete|deliveries|enable`: HTTP endpoints told of job and cluster
// events (docs/webhooks.md). ADMIN for any queues; MEMBER for queues within its subtrees.
import type { Command } from "commander";
import {
  CREATE_WEBHOOK,
  DELETE_WEBHOOK,
  ENABLE_WEBHOOK,
  LIST_WEBHOOKS,
  WEBHOOK_DELIVERIES,
} from "../client/queries.js";
import { action, apiClientOf, outputFormat, print, printErr, printJson } from "../command-context.js";
import { CliError } from "../exit-codes.js";
import { parseLabelSelectors } from "../label-selector.js";
import { renderTable } from "../output/table.js";

const EVENTS_HELP =
  "job.succeeded, job.failed, job.preempted, job.restarted, job.waiting_past_estimate, cluster.lost";

interface CreateOptions {
  events?: string;
  queues?: string;
  selector?: string[];
  allowPrivateTargets?: boolean;
}

interface WebhookRow {
  id: string;
  url: string;
  events: string[];
  queues: string[];
  labels: { key: string; values: string[] }[];
  enabled: boolean;
  disabledReason: string | null;
  consecutiveFailures: number;
  createdBy: string | null;
  createdAt: string;
  secret?: string;
}

interface DeliveryRow {
  id: string;
  event: string;
  job: string | null;
  state: string;
  attempts: number;
  responseCode: number | null;
  error: string | null;
  createdAt: string;
}

const list = (s: string | undefined) =>
  (s ?? "")
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);

/** job.succeeded → JOB_SUCCEEDED (the API refuses names it does not know). */
function eventValues(text: string | undefined): string[] {
  const names = list(text);
  if (!names.length) throw new CliError(`webhook create needs --events (any of ${EVENTS_HELP})`);
  return names.map((n) => n.toUpperCase().replace(".", "_"));
}

const eventName = (value: string) => value.toLowerCase().replace("_", ".");

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function registerWebhook(program: Command): void {
  const wh = program
    .command("webhook")
    .description("webhooks told of job and cluster events: create, list, delete, deliveries, enable");

  wh.command("create")
    .description("register a webhook; prints its id, and its signing secret once (stdout)")
    .argument("<url>", "the http(s) endpoint; redirects are not followed")
    .option("--events <events>", `comma-separated: ${EVENTS_HELP}`)
    .option("--queues <queues>", "comma-separated queues (and the queues below); MEMBER: required")
    .option("-l, --selector <selector>", "job labels, key=value,… (repeatable): each must hold", collect)
    .option("--allow-private-targets", "ADMIN only: allow private, loopback and link-local addresses")
    .action(
      action(async (url: string, opts: CreateOptions, cmd: Command) => {
        const input = {
          url,
          events: eventValues(opts.events),
          queues: list(opts.queues),
          labels: parseLabelSelectors(opts.selector),
          allowPrivateTargets: opts.allowPrivateTargets ?? false,
        };
        const { createWebhook } = await apiClientOf(cmd).request<{ createWebhook: WebhookRow }>(
          CREATE_WEBHOOK,
          {
            input,
          },
        );
        if (outputFormat(cmd) === "json") return printJson(createWebhook);
        print(`id: ${createWebhook.id}`);
        print(`secret: ${createWebhook.secret}`);
        printErr("the secret signs every request (docs/webhooks.md); it is shown this once");
      }),
    );

  wh.command("list")
    .description("the webhooks you may manage, oldest first")
    .action(
      action(async (_opts: unknown, cmd: Command) => {
        const { webhooks } = await apiClientOf(cmd).request<{ webhooks: WebhookRow[] }>(LIST_WEBHOOKS);
        if (outputFormat(cmd) === "json") return printJson(webhooks);
        print(
          renderTable(
            [
              { header: "ID", value: (w: WebhookRow) => w.id },
              { header: "URL", value: (w) => w.url },
              { header: "EVENTS", value: (w) => w.events.map(eventName).join(",") },
              { header: "QUEUES", value: (w) => (w.queues.length ? w.queues.join(",") : "*") },
              { header: "STATE", value: (w) => (w.enabled ? "enabled" : `disabled: ${w.disabledReason}`) },
              { header: "CREATED BY", value: (w) => w.createdBy ?? "-" },
            ],
            webhooks,
          ),
        );
      }),
    );

  wh.command("delete")
    .description("delete webhooks by id, with their delivery logs")
    .argument("<ids...>", "webhook ids (see `fleetq webhook list`)")
    .action(
      action(async (ids: string[], _opts: unknown, cmd: Command) => {
        const client = apiClientOf(cmd);
        for (const id of ids) {
          await client.request(DELETE_WEBHOOK, { id });
          print(`webhook ${id} deleted`);
        }
      }),
    );

  wh.command("deliveries")
    .description("a webhook's delivery log, newest first")
    .argument("<id>", "the webhook's id")
    .option("--state <state>", "pending, succeeded or failed")
    .option("--first <n>", "at most this many (default 50, at most 200)", (v) => Number(v))
    .action(
      action(async (id: string, opts: { state?: string; first?: number }, cmd: Command) => {
        const { webhookDeliveries } = await apiClientOf(cmd).request<{ webhookDeliveries: DeliveryRow[] }>(
          WEBHOOK_DELIVERIES,
          { webhook: id, state: opts.state?.toUpperCase(), first: opts.first },
        );
        if (outputFormat(cmd) === "json") return printJson(webhookDeliveries);
        print(
          renderTable(
            [
              { header: "ID", value: (d: DeliveryRow) => d.id },
              { header: "EVENT", value: (d) => eventName(d.event) },
              { header: "JOB", value: (d) => d.job ?? "-" },
              { header: "STATE", value: (d) => d.state },
              { header: "ATTEMPTS", value: (d) => String(d.attempts) },
              { header: "CODE", value: (d) => (d.responseCode === null ? "-" : String(d.responseCode)) },
              { header: "ERROR", value: (d) => d.error ?? "-" },
              { header: "CREATED", value: (d) => d.createdAt },
            ],
            webhookDeliveries,
          ),
        );
      }),
    );

  wh.command("enable")
    .description("enable a webhook disabled after failed deliveries again")
    .argument("<id>", "the webhook's id")
    .action(
      action(async (id: string, _opts: unknown, cmd: Command) => {
        const { enableWebhook } = await apiClientOf(cmd).request<{ enableWebhook: WebhookRow }>(
          ENABLE_WEBHOOK,
          {
            id,
          },
        );
        if (outputFormat(cmd) === "json") return printJson(enableWebhook);
        print(`webhook ${id} enabled`);
      }),
    );
}
