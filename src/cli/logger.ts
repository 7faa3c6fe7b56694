// Structured JSON logs (pino) for serve, worker, agent and dev: one line per event on stdout,
// or appended to a file (`fleetq dev` keeps its terminal for the banner). FLEETQ_LOG_LEVEL sets the level (default info).
// Secrets never reach a line: known secret fields are censored, and every URL's password, in any
// field or the message, is replaced (redact.ts).
import { pino, type Logger } from "pino";
import { redactFields, redactText, SECRET_LOG_PATHS } from "./redact.js";

export function createLogger(name: string, file?: string): Logger {
  const level = process.env.FLEETQ_LOG_LEVEL ?? process.env.LOG_LEVEL ?? "info";
  const destination = file ? pino.destination({ dest: file, mkdir: true, sync: false }) : pino.destination(1);
  return pino(
    {
      name,
      level,
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: SECRET_LOG_PATHS, censor: "***" },
      formatters: { log: (fields) => redactFields(fields) },
      hooks: {
        logMethod(args, method) {
          method.apply(this, args.map((a) => (typeof a === "string" ? redactText(a) : a)) as typeof args);
        },
      },
    },
    destination,
  );
}

/** Writes out buffered log lines (before the process exits). */
export function flushLogger(log: Logger): Promise<void> {
  return new Promise((resolve) => log.flush(() => resolve()));
}
