// What a simulated pod writes: the command it was asked to run (its rendered pod's first
// container), then a line every logIntervalSeconds of its run (a simulated minute by default),
// then how it ended. Lines are derived from the run's times, so a read is the same whoever asks
// and whenever; a followed read sends each line when its time comes. Finished runs are kept
// (the most recent ones) so their logs stay readable, as a real cluster keeps finished pods.
import type { V1Container } from "@kubernetes/client-node";
import { podPlace, renderPod, type RenderJob } from "../../../render/index.js";
import { LogError, type LogQuery, type LogSink } from "../types.js";
import type { SimulationClock } from "./simulated-backend.js";

/** Finished runs kept for their logs. */
const KEEP_FINISHED = 10_000;
/** Lines written per batch while catching up (a fast log, a long past). */
const BATCH_LINES = 500;

interface Run {
  startedAt: number;
  node: string;
  endedAt: number | null;
  /** How it ended: the exit code, or why it was stopped. */
  end: string | null;
}

export class SimulatedLogs {
  private readonly runs = new Map<string, Run>();
  /** job/pod → the restarts of its latest run. */
  private readonly latest = new Map<string, number>();
  private readonly finished: string[] = [];
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly clock: SimulationClock,
    private readonly intervalMs: number,
  ) {}

  started(jobId: string, pod: string, restarts: number, node: string, at: number): void {
    this.runs.set(key(jobId, pod, restarts), { startedAt: at, node, endedAt: null, end: null });
    this.latest.set(`${jobId}/${pod}`, restarts);
    this.wake();
  }

  /** The pod's current run ended: with an exit code, or stopped (evicted). */
  ended(jobId: string, pod: string, at: number, end: string): void {
    const restarts = this.latest.get(`${jobId}/${pod}`);
    if (restarts === undefined) return;
    const k = key(jobId, pod, restarts);
    const run = this.runs.get(k);
    if (!run || run.endedAt !== null) return;
    run.endedAt = at;
    run.end = end;
    this.finished.push(k);
    while (this.finished.length > KEEP_FINISHED) this.runs.delete(this.finished.shift()!);
    this.wake();
  }

  /** Time moved (a test's clock was stepped): followed reads look again. */
  wake(): void {
    for (const w of [...this.waiters]) w();
  }

  async read(query: LogQuery, sink: LogSink, signal: AbortSignal): Promise<string> {
    const run = this.runs.get(key(query.job.id, query.pod, query.restarts));
    if (!run) {
      const attempt = query.restarts + 1;
      throw new LogError("gone", `pod ${query.pod} has no run of attempt ${attempt} on this cluster`);
    }
    const lines = new RunLines(run, await commandOf(query), this.intervalMs, query.timestamps);
    const since = query.sinceSeconds === null ? -Infinity : this.clock.now() - query.sinceSeconds * 1000;
    let next = lines.firstAt(since);
    if (query.tailLines !== null) next = Math.max(next, lines.count(this.clock.now()) - query.tailLines);
    for (;;) {
      const upTo = lines.count(this.clock.now());
      while (next < upTo && !signal.aborted) {
        const to = Math.min(upTo, next + BATCH_LINES);
        await sink.write(lines.text(next, to));
        next = to;
      }
      if (!query.follow) return "the log as it is now";
      if (run.endedAt !== null && next >= lines.count(run.endedAt)) return "the pod's run ended";
      if (signal.aborted) return "stopped";
      await this.until(lines.timeOf(next), signal);
    }
  }

  /** Waits until `at` (or a wake, or the signal). */
  private until(at: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, Math.min(at - this.clock.now(), 60_000)));
      this.waiters.add(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }
}

const key = (jobId: string, pod: string, restarts: number) => `${jobId}/${pod}/${restarts}`;

/** The lines of one run: line 0 the command at its start, line k (k ≥ 1) k intervals into it
 * (before its end), then the line saying how it ended, at its end. */
class RunLines {
  constructor(
    private readonly run: Run,
    private readonly command: string,
    private readonly intervalMs: number,
    private readonly stamped: boolean,
  ) {}

  /** Progress lines written by `at` (all of them, once the run has ended). */
  private progress(at: number): number {
    const ticks = Math.max(0, Math.floor((at - this.run.startedAt) / this.intervalMs));
    if (this.run.endedAt === null) return ticks;
    const all = Math.max(0, Math.ceil((this.run.endedAt - this.run.startedAt) / this.intervalMs) - 1);
    return Math.min(ticks, all);
  }

  /** How many lines are written by `now`. */
  count(now: number): number {
    if (now < this.run.startedAt) return 0;
    const ended = this.run.endedAt !== null && now >= this.run.endedAt;
    return 1 + this.progress(now) + (ended ? 1 : 0);
  }

  /** The index of the end line (-1 while the run goes on). */
  private endLine(): number {
    return this.run.endedAt === null ? -1 : 1 + this.progress(this.run.endedAt);
  }

  timeOf(line: number): number {
    if (line === this.endLine()) return this.run.endedAt!;
    return this.run.startedAt + line * this.intervalMs;
  }

  /** The first line written at or after `at`. */
  firstAt(at: number): number {
    if (at <= this.run.startedAt) return 0;
    const line = Math.ceil((at - this.run.startedAt) / this.intervalMs);
    const end = this.endLine();
    return end >= 0 ? Math.min(line, end) : line;
  }

  text(from: number, to: number): string {
    const end = this.endLine();
    let out = "";
    for (let i = from; i < to; i++) {
      const body =
        i === 0
          ? `+ ${this.command}`
          : i === end
            ? this.run.end!
            : `${elapsed(i * this.intervalMs)} running on ${this.run.node}`;
      out += this.stamped ? `${new Date(this.timeOf(i)).toISOString()} ${body}\n` : `${body}\n`;
    }
    return out;
  }
}

/** "[01:02:03]": hours, minutes and seconds into the run. */
function elapsed(ms: number): string {
  const s = Math.floor(ms / 1000);
  const two = (n: number) => String(n).padStart(2, "0");
  return `[${two(Math.floor(s / 3600))}:${two(Math.floor(s / 60) % 60)}:${two(s % 60)}]`;
}

/** The command line of the pod's first container as rendered; its image's entrypoint when it sets none. */
async function commandOf(query: LogQuery): Promise<string> {
  let job: RenderJob;
  try {
    job = await query.renderJob();
  } catch {
    return "(the container's command)";
  }
  const place = podPlace(job, query.pod);
  if (!place) return "(the container's command)";
  let container: V1Container | undefined;
  try {
    container = renderPod(job, place, query.restarts).spec?.containers[0];
  } catch {
    return "(no pod template: the simulated pod runs without one)";
  }
  const words = [...(container?.command ?? []), ...(container?.args ?? [])];
  return words.length
    ? words.map(quoted).join(" ")
    : `(the entrypoint of ${container?.image ?? "the image"})`;
}

const quoted = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`);
