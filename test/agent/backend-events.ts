// Records what a backend tells the agent, for assertions.
import type {
  BackendEvents,
  ExternalPodGroup,
  NodeInventory,
  PodStateChange,
} from "../../src/agent/backends/types.js";

export interface NodesCall {
  nodes: NodeInventory[];
  complete: boolean;
  deleted: string[];
}

export class RecordedEvents implements BackendEvents {
  readonly nodeCalls: NodesCall[] = [];
  readonly states: PodStateChange[] = [];
  readonly groups: ExternalPodGroup[] = [];

  nodes(nodes: NodeInventory[], complete: boolean, deleted: string[]): void {
    this.nodeCalls.push({ nodes, complete, deleted });
  }

  podStates(changes: PodStateChange[]): void {
    this.states.push(...changes);
  }

  externalPodGroups(groups: ExternalPodGroup[]): void {
    this.groups.push(...groups);
  }

  get completeReports(): NodesCall[] {
    return this.nodeCalls.filter((call) => call.complete);
  }

  statesOf(pod: string): string[] {
    return this.states.filter((change) => change.pod === pod).map((change) => change.state);
  }
}
