// The agent's side of the GraphQL contract (schema.graphql): the agent mutations and the
// conversion of backend data into their input types. Nothing else of the API is used.
import type {
  ExternalPodGroup,
  NodeInventory,
  PodRef,
  PodState,
  WorkloadStatusChange,
} from "./backends/types.js";
import type { GraphQLClient } from "./graphql-client.js";
import type { InventoryPage } from "./pod-inventory-pages.js";
import type { RenderJob } from "../render/index.js";

interface RenderSpecData {
  job: string;
  name: string;
  namespace: string;
  queue: string;
  minMember: number;
  rendezvousPort: number | null;
  workload?: RenderJob["workload"];
  tasks: {
    name: string;
    replicas: number;
    resources: { cpu: number | null; memory: string | null; gpu: number | null; gpuMemory: number | null };
    extendedResources?: Record<string, number> | null;
    template: unknown;
  }[];
}

export interface Principal {
  name: string;
  role: string;
  cluster: string | null;
}

export interface BindResultReport {
  bindRequest: string;
  ok: boolean;
  message: string;
}

export interface PodStatusReport {
  job: string;
  pod: string;
  state: PodState;
  message?: string;
  bindRequest?: string;
  exitCode?: number;
  recreated?: boolean;
}

export class ControlPlane {
  constructor(
    private readonly client: GraphQLClient,
    readonly cluster: string,
  ) {}

  async whoAmI(): Promise<Principal> {
    const data = await this.client.request<{ me: Principal }>("query { me { name role cluster } }");
    return data.me;
  }

  /** The key this cluster's BindRequests are signed with (hex). */
  async bindKey(): Promise<string> {
    const data = await this.client.request<{ agentBindKey: string }>(
      "query($c: String!) { agentBindKey(cluster: $c) }",
      { c: this.cluster },
    );
    return data.agentBindKey;
  }

  async registerCluster(labels: Record<string, string>): Promise<void> {
    await this.client.request(
      "mutation($input: RegisterClusterInput!) { registerCluster(input: $input) { name } }",
      { input: { name: this.cluster, labels: toLabels(labels) } },
    );
  }

  async reportNodes(nodes: NodeInventory[], complete: boolean): Promise<number> {
    const data = await this.client.request<{ reportNodes: number }>(
      "mutation($cluster: String!, $nodes: [NodeReport!]!, $complete: Boolean!) { reportNodes(cluster: $cluster, nodes: $nodes, complete: $complete) }",
      { cluster: this.cluster, nodes: nodes.map(toNodeReport), complete },
    );
    return data.reportNodes;
  }

  async reportPodStatus(updates: PodStatusReport[]): Promise<number> {
    const data = await this.client.request<{ reportPodStatus: number }>(
      "mutation($cluster: String!, $updates: [PodStatusReport!]!) { reportPodStatus(cluster: $cluster, updates: $updates) }",
      { cluster: this.cluster, updates },
    );
    return data.reportPodStatus;
  }

  async reportBindResult(results: BindResultReport[]): Promise<number> {
    const data = await this.client.request<{ reportBindResult: number }>(
      "mutation($cluster: String!, $results: [BindResultReport!]!) { reportBindResult(cluster: $cluster, results: $results) }",
      { cluster: this.cluster, results },
    );
    return data.reportBindResult;
  }

  /** Not in the contract's required core: pods created in the cluster with our scheduler name
   * become (or update) a job with exactly these pod names. Idempotent on namespace/name. */
  async reportPodGroups(groups: ExternalPodGroup[]): Promise<number> {
    const data = await this.client.request<{ reportPodGroups: number }>(
      "mutation($cluster: String!, $groups: [PodGroupReport!]!) { reportPodGroups(cluster: $cluster, groups: $groups) }",
      { cluster: this.cluster, groups: groups.map(toPodGroupReport) },
    );
    return data.reportPodGroups;
  }

  /** What the job's objects on this cluster are rendered from (src/render). */
  async jobRenderSpec(job: string): Promise<RenderJob> {
    const data = await this.client.request<{ jobRenderSpec: RenderSpecData }>(
      "query($job: ID!) { jobRenderSpec(job: $job) { job name namespace queue minMember rendezvousPort workload tasks { name replicas resources { cpu memory gpu gpuMemory } extendedResources template } } }",
      { job },
    );
    const r = data.jobRenderSpec;
    return {
      id: r.job,
      name: r.name,
      namespace: r.namespace,
      queue: r.queue,
      minMember: r.minMember,
      rendezvousPort: r.rendezvousPort,
      workload: r.workload ?? null,
      tasks: r.tasks.map((t) => {
        const gpu = t.resources.gpu ?? 0;
        return {
          name: t.name,
          replicas: t.replicas,
          resources: {
            cpuMillis: t.resources.cpu ?? 0,
            memory: Number(t.resources.memory ?? 0),
            // Whole devices, or a fraction of one (the API's gpu is both in one number).
            gpus: gpu >= 1 ? gpu : 0,
            gpuFraction: gpu < 1 ? gpu : 0,
            gpuMemory: t.resources.gpuMemory ?? 0,
            extendedResources: t.extendedResources ?? {},
          },
          template: t.template,
        };
      }),
    };
  }

  /** What workloads' objects on this cluster say of themselves. */
  async reportWorkloadStatus(changes: WorkloadStatusChange[]): Promise<number> {
    const data = await this.client.request<{ reportWorkloadStatus: number }>(
      "mutation($cluster: String!, $updates: [WorkloadStatusReport!]!) { reportWorkloadStatus(cluster: $cluster, updates: $updates) }",
      {
        cluster: this.cluster,
        updates: changes.map((c) => ({ job: c.jobId, state: c.state, reason: c.reason, message: c.message })),
      },
    );
    return data.reportWorkloadStatus;
  }

  /** One page of the complete set of the cluster's pods: the pods of the control plane held on
   * the cluster in the page's range that the page does not list are failed. */
  async reportPodInventory(page: InventoryPage): Promise<number> {
    const ref = (r: PodRef | null) => (r ? { job: r.jobId, pod: r.pod } : null);
    const data = await this.client.request<{ reportPodInventory: number }>(
      "mutation($cluster: String!, $pods: [PodRef!]!, $after: PodRef, $through: PodRef) { reportPodInventory(cluster: $cluster, pods: $pods, after: $after, through: $through) }",
      { cluster: this.cluster, pods: page.pods.map(ref), after: ref(page.after), through: ref(page.through) },
    );
    return data.reportPodInventory;
  }
}

function toLabels(labels: Record<string, string>): { key: string; value: string }[] {
  return Object.entries(labels).map(([key, value]) => ({ key, value }));
}

function toResources(r: { cpuMillis: number; memory: number; gpus: number; gpuMemory: number }) {
  // Bytes travel as decimal strings (schema.graphql's Bytes scalar).
  return { cpu: r.cpuMillis, memory: String(r.memory), gpu: r.gpus, gpuMemory: r.gpuMemory };
}

export function toNodeReport(node: NodeInventory) {
  const { gpus, gpuMemory } = node.capacity;
  return {
    name: node.name,
    // A node's gpuMemory is the total of its devices; the inventory keeps one device's.
    capacity: toResources({ ...node.capacity, gpuMemory: gpus * gpuMemory }),
    labels: toLabels(node.labels),
    gpuModel: node.gpuModel,
    unschedulable: node.unschedulable,
    ready: node.ready,
    maxPods: node.maxPods,
    taints: node.taints,
    ...(node.gpuDevices?.length ? { gpuDevices: node.gpuDevices } : {}),
  };
}

function toPodGroupReport(group: ExternalPodGroup) {
  return {
    namespace: group.namespace,
    name: group.name,
    queue: group.queue,
    minMember: group.minMember,
    priority: group.priority,
    pods: group.pods.map((pod) => ({
      name: pod.name,
      ...(pod.uid ? { uid: pod.uid } : {}),
      resources: toResources(pod.resources),
      gpuModel: pod.gpuModel,
      nodeSelector: toLabels(pod.nodeSelector),
    })),
  };
}
