// topology: keep a (sub-)group inside one domain of a node-label hierarchy (rack, zone,
// …) when it requires so, and pack it into as few preferred-level domains as it can
// (KAI: plugins/topology). The domain trees are built once per session; each
// subsetting call works on the subtree its node set spans.
import type { NodeInfo } from "../../api/node-info.js";
import type { Plugin } from "../../framework/session.js";
import { TopologyTree } from "./domain-tree.js";
import { scoresForTask } from "./node-scores.js";
import { TopologySubsetter } from "./subset-nodes.js";

export const name = "topology";

export function create(): Plugin {
  return {
    name,
    onSessionOpen(ssn) {
      const trees = new Map<string, TopologyTree>();
      for (const spec of ssn.topologies.values()) trees.set(spec.name, new TopologyTree(spec, ssn.nodes));
      // Sub-group name → preferred-level node scores; valid for one job's attempt.
      const scores = new Map<string, Map<NodeInfo, number>>();
      const subsetter = new TopologySubsetter(trees, ssn.nodeByName, scores);

      ssn.preJobAllocationFns.push(() => scores.clear());
      ssn.subsetNodesFns.push((job, target, tasks, nodes) => subsetter.subset(job, target, tasks, nodes));
      ssn.nodeOrderFns.push((task, node) => {
        if (scores.size === 0) return 0;
        return scoresForTask(scores, ssn.jobs.get(task.jobUid), task)?.get(node) ?? 0;
      });
    },
  };
}
