// A pod's log from the Kubernetes API (the kubelet's, through the API server): the pod of the
// asked attempt, its default container (kubectl's rule: the kubectl.kubernetes.io/default-container
// annotation, else the first), read once or followed as a stream until the container ends.
import { type CoreV1Api, type KubeConfig, Log, type V1Pod } from "@kubernetes/client-node";
import { Writable } from "node:stream";
import { LOG_LIMIT_BYTES } from "../../../protocol/agent-requests.js";
import { uniquePodName } from "../../../render/index.js";
import { LogError, type LogQuery, type LogSink } from "../types.js";
import { httpStatus, statusMessage } from "./kube-errors.js";

const DEFAULT_CONTAINER = "kubectl.kubernetes.io/default-container";

export interface PodLogSource {
  api: CoreV1Api;
  kubeConfig: KubeConfig;
  cluster: string;
  defaultNamespace: string;
}

/** `podName`: the pod's name in the cluster where fleetq did not choose it (a workload's
 * controller made it); otherwise it follows from the query. */
export async function readPodLogs(
  source: PodLogSource,
  query: LogQuery,
  sink: LogSink,
  signal: AbortSignal,
  podName?: string,
): Promise<string> {
  const namespace = query.job.namespace || source.defaultNamespace;
  const name =
    podName ??
    (query.job.createdInCluster
      ? query.pod
      : uniquePodName(query.job.id, query.job.name, query.pod, query.restarts));
  let pod: V1Pod;
  try {
    pod = await source.api.readNamespacedPod({ name, namespace });
  } catch (err) {
    if (httpStatus(err) === 404)
      throw new LogError("gone", `pod ${namespace}/${name} is not on cluster ${source.cluster} (any more)`);
    throw new LogError("failed", `cannot read pod ${namespace}/${name}: ${statusMessage(err)}`);
  }
  const container = pod.metadata?.annotations?.[DEFAULT_CONTAINER] ?? pod.spec?.containers?.[0]?.name ?? "";
  const options = {
    tailLines: query.tailLines ?? undefined,
    sinceSeconds: query.sinceSeconds ?? undefined,
    timestamps: query.timestamps,
    limitBytes: LOG_LIMIT_BYTES,
  };
  const once = () =>
    source.api.readNamespacedPodLog({ name, namespace, container, ...options }).catch((err: unknown) => {
      throw refusal(err, namespace, name);
    });
  if (!query.follow) {
    const text = await once();
    if (text) await sink.write(text.endsWith("\n") ? text : `${text}\n`);
    return "the log as it is now";
  }
  // The follow stream's errors carry no message: a first read says why it cannot start.
  if (!pod.spec?.nodeName || pod.status?.phase === "Pending") await once();
  return follow(source, { namespace, name, container, options }, sink, signal);
}

/** Streams the log into the sink, line by line, until the container ends or `signal` aborts. */
async function follow(
  source: PodLogSource,
  target: { namespace: string; name: string; container: string; options: object },
  sink: LogSink,
  signal: AbortSignal,
): Promise<string> {
  let partial = "";
  const lines = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      const text = partial + chunk.toString("utf8");
      const end = text.lastIndexOf("\n");
      partial = text.slice(end + 1);
      if (end < 0) return callback();
      sink.write(text.slice(0, end + 1)).then(
        () => callback(),
        (err: Error) => callback(err),
      );
    },
  });
  const ended = new Promise<string>((resolve, reject) => {
    lines.on("finish", () => resolve("the pod's run ended"));
    lines.on("error", reject);
  });
  // The response body is piped in by client-node: aborting the read errors it, which must not go
  // unheard (an 'error' without a listener would end the agent's process).
  lines.on("pipe", (body: NodeJS.ReadableStream) => {
    body.on("error", (err: Error) => {
      if (!signal.aborted) lines.destroy(err);
    });
  });
  let controller: AbortController;
  try {
    controller = await new Log(source.kubeConfig).log(
      target.namespace,
      target.name,
      target.container,
      lines,
      { follow: true, ...target.options },
    );
  } catch (err) {
    throw refusal(err, target.namespace, target.name);
  }
  const abort = () => controller.abort();
  signal.addEventListener("abort", abort, { once: true });
  try {
    const reason = await Promise.race([
      ended,
      new Promise<string>((resolve) =>
        signal.addEventListener("abort", () => resolve("stopped"), { once: true }),
      ),
    ]);
    if (partial) await sink.write(`${partial}\n`);
    return reason;
  } finally {
    signal.removeEventListener("abort", abort);
    controller.abort();
  }
}

function refusal(err: unknown, namespace: string, name: string): LogError {
  const status = httpStatus(err);
  if (status === 404) return new LogError("gone", `pod ${namespace}/${name} is gone: ${statusMessage(err)}`);
  if (status === 400) return new LogError("waiting", statusMessage(err));
  return new LogError("failed", `cannot read the log of ${namespace}/${name}: ${statusMessage(err)}`);
}
