// The places of a workload's pods in the pod tracker: a non-indexed Job's pod takes the first
// place no live pod holds; a pod being deleted (terminating) gives its place up to the
// replacement its controller makes meanwhile, so a bind of that place finds the replacement.
import type { V1Pod } from "@kubernetes/client-node";
import { expect, it } from "vitest";
import { PodTracker } from "../../src/agent/backends/kubernetes/pod-tracker.js";
import type { PodStateChange } from "../../src/agent/backends/types.js";

function jobPod(name: string, phase = "Pending", deleting = false): V1Pod {
  return {
    metadata: {
      name,
      namespace: "ml",
      uid: `uid-${name}`,
      labels: { "fleetq.io/job-id": "j1", "batch.kubernetes.io/job-name": "etl" },
      annotations: { "fleetq.io/job-id": "j1", "fleetq.io/workload-kind": "Job" },
      ...(deleting ? { deletionTimestamp: new Date() } : {}),
    },
    spec: { schedulerName: "fleetq", containers: [{ name: "main", image: "x" }] },
    status: { phase },
  };
}

it("a terminating pod's replacement takes its place", () => {
  const changes: PodStateChange[] = [];
  const tracker = new PodTracker({ podStates: (c) => changes.push(...c), externalPodGroups: () => {} }, 10);
  tracker.onList([jobPod("etl-aaaaa", "Running"), jobPod("etl-bbbbb", "Running")]);
  expect(tracker.placePod("j1", "job-0")).toBe("etl-aaaaa");
  expect(tracker.placePod("j1", "job-1")).toBe("etl-bbbbb");
  // etl-aaaaa is being deleted (evicted, a node drain): the Job controller replaces it at once.
  tracker.onEvent("MODIFIED", jobPod("etl-aaaaa", "Running", true));
  tracker.onEvent("ADDED", jobPod("etl-ccccc"));
  expect(tracker.placePod("j1", "job-0")).toBe("etl-ccccc");
  expect(tracker.placePod("j1", "job-2")).toBeNull();
  tracker.stop();
});
