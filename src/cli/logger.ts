// Structured JSON logs (pino) for serve, worker, agent and dev: one line per event on stdout,
// or appended to a file (`fleetq dev` keeps its terminal for the banner). FLEETQ_LOG_LEVEL sets the level (default info).
import { pino, type Logger } from "pino";

export function createLogger(name: string, file?: string): Logger {
  const level = process.env.FLEETQ_LOG_LEVEL ?? process.env.LOG_LEVEL ?? "info";
  const destination = file ? pino.destination({ dest: file, mkdir: true, sync: false }) : pino.destination(1);
  return pino({ name, level, timestamp: pino.stdTimeFunctions.isoTime }, destination);
}

/** Writes out buffered log lines (before the process exits). */
export function flushLogger(log: Logger): Promise<void> {
  return new Promise((resolve) => log.flush(() => resolve()));
}
