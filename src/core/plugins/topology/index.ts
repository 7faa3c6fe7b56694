// topology: keep a (sub-)group inside one domain of a node-label hierarchy (rack, zone,
// …) when it requires so, and pack it into as few preferred-level domains as it can
// (KAI: plugins/topology). The domain trees are built once per session; each
// subsetting call works on the subtree its node set spans.
import type { PodInfo } from "../../api/pod-info.js";
import type { Plugin } from "../../framework/session.js";
import { TopologyTree } from "./domain-tree.js";
import { AttemptScores } from "./node-scores.js";
import { TopologySubsetter } from "./subset-nodes.js";

export const name = "topology";

export function create(): Plugin {
  return {
    name,
    onSessionOpen(ssn) {
      const trees = new Map<string, TopologyTree>();
      for (const spec of ssn.topologies.values()) trees.set(spec.name, new TopologyTree(spec, ssn.nodes));
      const scores = new AttemptScores();
      const subsetter = new TopologySubsetter(trees, ssn.nodeByName, ssn.nodes, scores);

      ssn.preJobAllocationFns.push((job) => scores.reset(job));
      ssn.subsetNodesFns.push((job, target, tasks, nodes) => subsetter.subset(job, target, tasks, nodes));
      // The scores depend on the job attempt, not only on the pod and the node: an attempt score.
      // (Asked for every pod of every attempt: the job lookup only when some scores exist.)
      const scoresOf = (task: PodInfo) =>
        scores.empty ? null : scores.forTask(ssn.jobs.get(task.jobUid), task);
      ssn.attemptNodeOrderFns.push({
        appliesTo: (task) => scoresOf(task) !== null,
        fn: (task, node) => scoresOf(task)?.of(node) ?? 0,
      });
    },
  };
}
