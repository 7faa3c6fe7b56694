// The live progress line of `submit --wait`: the job's state and its pods pending / running /
// succeeded / failed. On a terminal a cli-progress bar redrawn in place (succeeded of total);
// elsewhere (CI logs) one line each time the counts or the state change.
import type { SingleBar } from "cli-progress";
import { lazyRequire } from "../lazy.js";
import type { JobSummary, JobView } from "../client/types.js";
import { formatSeconds } from "./format.js";

const cliProgress = lazyRequire<typeof import("cli-progress")>("cli-progress");
export interface PodCounts {
  pending: number;
  running: number;
  succeeded: number;
  failed: number;
  total: number;
}

/** Every pod of the job counted (podStates), not only the page of pods a query read. */
export function podCounts(job: JobSummary): PodCounts {
  const c: PodCounts = { pending: 0, running: 0, succeeded: 0, failed: 0, total: 0 };
  for (const { state, count } of job.podStates) {
    c.total += count;
    if (state === "RUNNING" || state === "RELEASING") c.running += count;
    else if (state === "SUCCEEDED") c.succeeded += count;
    else if (state === "FAILED") c.failed += count;
    else c.pending += count; // PENDING, PIPELINED, BINDING: not running yet
  }
  return c;
}

export function progressSummary(job: JobSummary): string {
  const c = podCounts(job);
  const where = job.cluster ? ` on ${job.cluster.name}` : "";
  const attempt = job.restarts > 0 ? ` (attempt ${job.attempt})` : "";
  return `${job.state}${where}${attempt}  pods: ${c.pending} pending, ${c.running} running, ${c.succeeded} succeeded${c.failed ? `, ${c.failed} failed` : ""}`;
}

export class JobProgress {
  private bar: SingleBar | null = null;
  private lastLine = "";
  private readonly started = Date.now();

  constructor(
    private readonly stream: NodeJS.WriteStream = process.stderr,
    private readonly live = Boolean(stream.isTTY),
  ) {}

  update(job: JobView): void {
    const summary = progressSummary(job);
    const c = podCounts(job);
    if (this.live) {
      if (!this.bar) {
        this.bar = new (cliProgress().SingleBar)({
          stream: this.stream,
          format: `job ${job.name} |{bar}| {summary}  {duration_formatted}`,
          barsize: 20,
          hideCursor: true,
          clearOnComplete: false,
          // redraw every second so the elapsed time moves while nothing else does
          fps: 1,
          etaBuffer: 1,
        });
        this.bar.start(c.total, c.succeeded, { summary });
      }
      this.bar.setTotal(c.total);
      this.bar.update(c.succeeded + c.failed, { summary });
      return;
    }
    const line = `job ${job.name} (${job.id}) ${summary}`;
    if (line !== this.lastLine) {
      this.lastLine = line;
      this.stream.write(`[${this.elapsed()}] ${line}\n`);
    }
  }

  /** A note that does not belong to the progress line (fallbacks, warnings). */
  note(text: string): void {
    if (this.bar) {
      this.stream.write("\n");
    }
    this.stream.write(`${text}\n`);
  }

  stop(): void {
    this.bar?.stop();
    this.bar = null;
  }

  elapsed(): string {
    return formatSeconds(Math.round((Date.now() - this.started) / 1000));
  }
}
