// What the agent does with one BindRequest taken from its queue: answer it from its
// recorded outcome if it was executed before, otherwise execute it and record the outcome,
// then wait until the API has the result (only then may the queue job complete). Requests of
// one pod go one at a time, stale ones unexecuted (pod-request-order.ts).
import type { Logger } from "pino";
import type { BindRequestMessage } from "../protocol/bind-request.js";
import type { ClusterBackend } from "./backends/types.js";
import { executeRequest } from "./bind-executor.js";
import type { OutcomeStore } from "./outcome-store.js";
import { PodRequestOrder } from "./pod-request-order.js";
import type { Reporter } from "./reporter.js";
import type { JobSpecCache } from "./job-spec-cache.js";

export interface RequestHandlerDeps {
  cluster: string;
  backend: ClusterBackend;
  outcomes: OutcomeStore;
  reporter: Reporter;
  jobs: JobSpecCache;
  /** Aborted when the agent stops. */
  signal: AbortSignal;
  log: Logger;
}

export function requestHandler(deps: RequestHandlerDeps): (request: BindRequestMessage) => Promise<void> {
  const { cluster, backend, outcomes, reporter, jobs, signal, log } = deps;
  const order = new PodRequestOrder();
  return async (request) => {
    let result = await outcomes.get(request.id, signal);
    if (result) {
      log.debug({ request: request.id }, "request already executed; reporting its recorded outcome");
    } else {
      result = await order.run(request, () => executeRequest(backend, cluster, request, jobs));
      // One line per request at debug level: at thousands of binds a second, info would be the
      // agent's main work.
      log.debug(
        { request: request.id, kind: request.kind, pod: request.pod.name, node: request.node, ...result },
        "request done",
      );
      await outcomes.put(result, signal);
    }
    await reporter.bindResult(result);
  };
}
