// Where the Kubernetes backend's credentials come from: an explicit kubeconfig file, or
// the usual places ($KUBECONFIG, ~/.kube/config, the in-cluster service account).
import { KubeConfig } from "@kubernetes/client-node";

export function loadKubeConfig(file?: string, context?: string): KubeConfig {
  const config = new KubeConfig();
  if (file) config.loadFromFile(file);
  else config.loadFromDefault();
  if (context) config.setCurrentContext(context);
  if (!config.getCurrentCluster()) {
    throw new Error(
      `no Kubernetes cluster in ${file ?? "the default kubeconfig"}${context ? ` (context ${context})` : ""}`,
    );
  }
  return config;
}
