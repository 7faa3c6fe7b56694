// Builds the backend `fleetq agent --backend kubernetes|simulated` asks for.
import type { Logger } from "pino";
import { KubernetesBackend } from "./kubernetes/kubernetes-backend.js";
import { loadKubeConfig } from "./kubernetes/kube-config.js";
import { SimulatedBackend } from "./simulated/simulated-backend.js";
import type { ClusterBackend } from "./types.js";

export type BackendConfig =
  | {
      kind: "kubernetes";
      /** Path of a kubeconfig; default: $KUBECONFIG, ~/.kube/config, or in-cluster. */
      kubeconfig?: string;
      context?: string;
      /** Namespace of pods whose job names none. */
      defaultNamespace?: string;
      /** Default one hour; 0 keeps finished pods. */
      finishedPodTtlSeconds?: number;
      /** Upgrading from an agent without seals: adopt the bound pods found at start (once). */
      adoptUnsealedPods?: boolean;
    }
  | {
      kind: "simulated";
      clusterFile: string;
      /** Keeps the cluster's pods across agent restarts (simulated/state-file.ts). */
      stateFile?: string;
    };

export async function createBackend(
  config: BackendConfig,
  cluster: string,
  log: Logger,
): Promise<ClusterBackend> {
  switch (config.kind) {
    case "simulated":
      return SimulatedBackend.load(config.clusterFile, undefined, config.stateFile);
    case "kubernetes":
      return new KubernetesBackend({
        cluster,
        kubeConfig: loadKubeConfig(config.kubeconfig, config.context),
        defaultNamespace: config.defaultNamespace ?? "default",
        log: log.child({ backend: "kubernetes" }),
        ...(config.finishedPodTtlSeconds !== undefined
          ? { finishedPodTtlMs: config.finishedPodTtlSeconds * 1000 }
          : {}),
        adoptUnsealedPods: config.adoptUnsealedPods ?? false,
      });
  }
}
