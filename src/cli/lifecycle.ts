// Long-running commands (serve, worker, agent, dev): run until SIGINT or SIGTERM, then stop the
// parts in reverse order of starting. A second Ctrl-C while stopping exits at once.
import type { Logger } from "pino";

export interface Stoppable {
  name: string;
  stop(): Promise<void>;
}

export class Lifecycle {
  private readonly parts: Stoppable[] = [];
  private stopping: Promise<void> | null = null;

  constructor(private readonly log: Logger) {}

  add(part: Stoppable): void {
    this.parts.push(part);
  }

  /** Stops every part started so far, newest first; failures are logged, not thrown. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      for (const part of [...this.parts].reverse()) {
        try {
          await part.stop();
          this.log.info({ part: part.name }, "stopped");
        } catch (e) {
          this.log.error({ part: part.name, err: (e as Error).message }, "stop failed");
        }
      }
    })();
    return this.stopping;
  }

  /** Resolves when a signal arrived and everything stopped. */
  untilSignal(onSignal?: (signal: string) => void): Promise<void> {
    return new Promise((resolve) => {
      let firstAt = 0;
      const handler = (signal: NodeJS.Signals) => {
        if (this.stopping) {
          // One Ctrl-C can arrive twice (the terminal signals the whole process group, and a parent
          // such as tsx or npm relays it): only a later one means "stop now".
          if (Date.now() - firstAt < 1000) return;
          process.stderr.write(`fleetq: second signal (${signal}): exiting without waiting\n`);
          process.exit(1);
        }
        firstAt = Date.now();
        onSignal?.(signal);
        this.log.info({ signal }, "stopping");
        void this.stop().then(resolve);
      };
      process.on("SIGINT", handler);
      process.on("SIGTERM", handler);
    });
  }
}
