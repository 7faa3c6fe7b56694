// `fleetq dev` (= `npm start`): the whole control plane and three simulated clusters in one
// process, with a demo queue tree, quotas and tokens. See dev/start-dev.ts.
import { join } from "node:path";
import { print } from "../command-context.js";
import { devBanner } from "../dev/banner.js";
import { StartInterrupted, startDev } from "../dev/start-dev.js";
import { stateDir } from "../dev/state-dir.js";
import { portOf } from "../env.js";
import { createLogger, flushLogger } from "../logger.js";
import { redactUrl } from "../redact.js";
import { probeRedis } from "./redis-check.js";

export async function runDev(opts: { port?: string; host?: string; logFile?: string }): Promise<void> {
  const env = process.env;
  const logFile = opts.logFile === "-" ? null : (opts.logFile ?? join(stateDir(env), "dev.log"));
  const log = createLogger("fleetq-dev", logFile ?? undefined);
  process.stderr.write("fleetq dev: starting (database, Redis, API, workers, agents)…\n");
  // Ctrl-C while starting: finish the step under way, stop what started, exit.
  let interrupted = false;
  const onStartupSignal = () => {
    interrupted = true;
    process.stderr.write("\nfleetq dev: stopping once the current step is done…\n");
  };
  process.on("SIGINT", onStartupSignal);
  process.on("SIGTERM", onStartupSignal);
  let dev: Awaited<ReturnType<typeof startDev>>;
  try {
    dev = await startDev({
      port: portOf(opts.port ?? env.FLEETQ_PORT, "--port/FLEETQ_PORT"),
      host: opts.host ?? (env.FLEETQ_HOST || undefined),
      env,
      log,
      interrupted: () => interrupted,
    });
  } catch (e) {
    if (!(e instanceof StartInterrupted)) throw e;
    process.stderr.write("fleetq dev: stopped\n");
    await flushLogger(log);
    process.exit(130);
  } finally {
    process.off("SIGINT", onStartupSignal);
    process.off("SIGTERM", onStartupSignal);
  }
  print(devBanner(dev, logFile));
  // dev is a local setup: an open Redis is allowed here, as --insecure-redis allows it to serve and worker.
  if ((await probeRedis(dev.redis.url)) === "open")
    process.stderr.write(
      `fleetq dev: Redis at ${redactUrl(dev.redis.url)} needs no password: fine for a local setup ` +
        "(dev allows it, as --insecure-redis does for fleetq serve and worker)\n",
    );
  await dev.lifecycle.untilSignal(() => process.stderr.write("\nfleetq dev: stopping…\n"));
  process.stderr.write("fleetq dev: stopped\n");
  await flushLogger(log);
  // Stopped cleanly; a library's leftover timer must not keep the process alive.
  process.exit(0);
}
