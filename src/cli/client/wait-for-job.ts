// Follows a job until it finishes or a deadline passes: the jobUpdated subscription drives it;
// a poll right after subscribing closes the gap between submit and subscribe, a slow poll
// guards against a missed pub/sub message, and if the subscription cannot be had (or drops)
// polling takes over. Transient API failures are waited out (a CI job outlives an API restart).
import { EXIT } from "../exit-codes.js";
import type { ApiClient } from "./api-client.js";
import { CliError } from "../exit-codes.js";
import { GET_JOB, JOB_UPDATED } from "./queries.js";
import { type JobView, TERMINAL_JOB_STATES } from "./types.js";

export interface WaitOptions {
  /** undefined = no deadline */
  timeoutMs?: number;
  onUpdate(job: JobView): void;
  onNote(text: string): void;
  /** Polling interval without a subscription. */
  pollMs?: number;
  /** Safety polling interval while subscribed. */
  safetyPollMs?: number;
}

export type WaitResult = { outcome: "finished"; job: JobView } | { outcome: "timeout"; job: JobView };

export async function waitForJob(
  client: ApiClient,
  initial: JobView,
  opts: WaitOptions,
): Promise<WaitResult> {
  let latest = initial;
  opts.onUpdate(latest);
  if (TERMINAL_JOB_STATES.has(latest.state)) return { outcome: "finished", job: latest };
  // graphql-ws and ws load only for a job that is waited on
  const { subscribe } = await import("./subscriptions.js");

  return new Promise<WaitResult>((resolve, reject) => {
    let settled = false;
    let pollTimer: NodeJS.Timeout | undefined;
    let subscribed = true;
    let warnedUnavailable = false;
    const deadline =
      opts.timeoutMs === undefined
        ? undefined
        : setTimeout(() => finish({ outcome: "timeout", job: latest }), opts.timeoutMs);

    const finish = (result: WaitResult | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      clearTimeout(pollTimer);
      subscription.dispose();
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    const seen = (job: JobView) => {
      // Deliveries may arrive out of order with polls: a finished job stays finished.
      if (TERMINAL_JOB_STATES.has(latest.state) && !TERMINAL_JOB_STATES.has(job.state)) return;
      latest = job;
      opts.onUpdate(job);
      if (TERMINAL_JOB_STATES.has(job.state)) finish({ outcome: "finished", job });
    };
    const poll = async () => {
      try {
        const { job } = await client.request<{ job: JobView | null }>(GET_JOB, { id: initial.id });
        if (!job) return finish(new CliError(`job ${initial.id} no longer exists`, EXIT.JOB_FAILED));
        warnedUnavailable = false;
        seen(job);
      } catch (e) {
        if (e instanceof CliError && e.exitCode === EXIT.UNAVAILABLE) {
          if (!warnedUnavailable) opts.onNote(`fleetq: ${e.message}; still waiting`);
          warnedUnavailable = true;
        } else {
          return finish(e as Error);
        }
      }
      schedulePoll();
    };
    const schedulePoll = () => {
      if (settled) return;
      clearTimeout(pollTimer);
      pollTimer = setTimeout(poll, subscribed ? (opts.safetyPollMs ?? 15_000) : (opts.pollMs ?? 2_000));
    };

    const subscription = subscribe<{ jobUpdated: JobView }>(
      client.connection,
      JOB_UPDATED,
      { id: initial.id },
      (d) => seen(d.jobUpdated),
    );
    subscription.done.then(
      () => {
        if (settled) return;
        subscribed = false;
        opts.onNote("fleetq: live updates ended; polling every 2s");
        void poll();
      },
      (err: Error) => {
        if (settled) return;
        subscribed = false;
        opts.onNote(`fleetq: live updates unavailable (${err.message}); polling every 2s`);
        void poll();
      },
    );
    void poll();
  });
}
