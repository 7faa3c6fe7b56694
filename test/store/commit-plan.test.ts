// The commit planner without a database: a session result and the snapshot's rows → exactly the
// pod changes, BindRequests, events and jobs to refresh; nothing at all when nothing changed.
import { describe, expect, it } from "vitest";
import type { JobOutcome, SessionResult } from "../../src/core/index.js";
import { pendingReasonFromOutcome } from "../../src/store/domain/pending-reason.js";
import { planCommit } from "../../src/store/operations/commit-plan.js";
import type { JobRow, PodRow, SnapshotRows } from "../../src/store/snapshot/rows.js";

const J1 = "00000000-0000-7000-8000-000000000001";
const J2 = "00000000-0000-7000-8000-000000000002";
const OTHER = "00000000-0000-7000-8000-000000000003";

const jobRow = (id: string, over: Partial<JobRow> = {}): JobRow => ({
  id,
  name: `job-${id.slice(-1)}`,
  queueName: "team-a",
  clusterName: "c1",
  state: "PENDING",
  minMember: 2,
  pendingReason: null,
  lastStartAt: null,
  staleSince: null,
  ...over,
});

const podRow = (job: string, name: string, over: Partial<PodRow> = {}): PodRow => ({
  id: `${job}/${name}`,
  jobId: job,
  name,
  state: "PENDING",
  nodeName: null,
  gpuGroups: [],
  gpuDevices: [],
  message: null,
  ...over,
});

function rowsOf(jobs: JobRow[], pods: PodRow[]): SnapshotRows {
  return {
    jobs: new Map(jobs.map((j) => [j.id, j])),
    pods: new Map(pods.map((p) => [p.id, p])),
    pipelined: new Set(pods.filter((p) => p.state === "PIPELINED").map((p) => p.id)),
  };
}

const emptyResult = (over: Partial<SessionResult> = {}): SessionResult => ({
  binds: [],
  pipelines: [],
  evictions: [],
  pods: [],
  jobs: [],
  queues: [],
  searchCursors: [],
  ...over,
});

const outcome = (uid: string, over: Partial<JobOutcome> = {}): JobOutcome => ({
  uid,
  podStatuses: {},
  fitErrors: [],
  shortfall: null,
  lastStartAt: null,
  staleSince: null,
  ...over,
});

describe("planCommit", () => {
  it("plans nothing when the session changed nothing", () => {
    const waiting = outcome(J1, { fitErrors: ["no node has 9 GPUs"] });
    const rows = rowsOf(
      [
        jobRow(J1, { pendingReason: pendingReasonFromOutcome("c1", waiting) }),
        jobRow(J2, { state: "RUNNING", lastStartAt: new Date(5_000) }),
      ],
      [
        podRow(J1, "w-0"),
        podRow(J2, "w-0", { state: "RUNNING", nodeName: "n1" }),
        podRow(J2, "w-1", { state: "BINDING", nodeName: "n2" }),
      ],
    );
    const plan = planCommit(
      "c1",
      emptyResult({ jobs: [waiting, outcome(J2, { lastStartAt: 5_000 })] }),
      rows,
    );
    expect(plan).toEqual({ pods: [], requests: [], events: [], jobs: new Map() });
  });

  it("binds: pods BINDING with their devices, one BIND request each, one event per job, the job refreshed", () => {
    const rows = rowsOf([jobRow(J1)], [podRow(J1, "w-0"), podRow(J1, "w-1")]);
    const binds = ["w-0", "w-1"].map((name, i) => ({
      job: J1,
      pod: `${J1}/${name}`,
      node: `n${i}`,
      gpuGroups: [],
      gpuDevices: [i],
      action: "allocate" as const,
    }));
    const plan = planCommit(
      "c1",
      emptyResult({
        binds,
        pods: binds.map((b) => ({
          job: J1,
          pod: b.pod,
          status: "Binding" as const,
          node: b.node,
          gpuGroups: [],
        })),
        jobs: [outcome(J1, { lastStartAt: 7_000 })],
      }),
      rows,
    );
    expect(plan.pods.map((p) => [p.id, p.state, p.node, p.gpuDevices, p.message])).toEqual([
      [`${J1}/w-0`, "BINDING", "n0", [0], null],
      [`${J1}/w-1`, "BINDING", "n1", [1], null],
    ]);
    expect(plan.requests.map((r) => [r.kind, r.podId, r.node, r.gpuDevices, r.reason])).toEqual([
      ["BIND", `${J1}/w-0`, "n0", [0], "allocate"],
      ["BIND", `${J1}/w-1`, "n1", [1], "allocate"],
    ]);
    expect(plan.events).toEqual([
      {
        kind: "pods.bound",
        job: J1,
        queue: "team-a",
        cluster: "c1",
        message: "job job-1: placed w-0→n0, w-1→n1",
      },
    ]);
    expect([...plan.jobs.keys()]).toEqual([J1]);
    expect(plan.jobs.get(J1)?.lastStartAt).toEqual(new Date(7_000));
  });

  it("evicts with the pod's devices and the session's reason; pipelines expire unless renewed", () => {
    const rows = rowsOf(
      [jobRow(J1, { state: "RUNNING" }), jobRow(J2)],
      [
        podRow(J1, "w-0", { state: "RUNNING", nodeName: "n1", gpuDevices: [3] }),
        podRow(J2, "w-0", { state: "PIPELINED", nodeName: "n1" }),
        podRow(J2, "w-1", { state: "PIPELINED", nodeName: "n2" }),
      ],
    );
    const plan = planCommit(
      "c1",
      emptyResult({
        evictions: [{ job: J1, pod: `${J1}/w-0`, node: "n1", action: "reclaim", message: "reclaimed for b" }],
        pipelines: [{ job: J2, pod: `${J2}/w-0`, node: "n1", gpuGroups: [], action: "reclaim" }],
        pods: [
          { job: J1, pod: `${J1}/w-0`, status: "Releasing", node: "n1", gpuGroups: [] },
          { job: J2, pod: `${J2}/w-0`, status: "Pipelined", node: "n1", gpuGroups: [] },
        ],
      }),
      rows,
    );
    // w-0 of J2 stays pipelined to n1 (unchanged, not written); w-1 was not renewed.
    expect(plan.pods.map((p) => [p.id, p.state, p.node, p.message])).toEqual([
      [`${J1}/w-0`, "RELEASING", "n1", "reclaimed for b"],
      [`${J2}/w-1`, "PENDING", null, null],
    ]);
    expect(plan.requests.map((r) => [r.kind, r.podId, r.gpuDevices, r.reason])).toEqual([
      ["EVICT", `${J1}/w-0`, [3], "reclaimed for b"],
    ]);
    expect(plan.events.map((e) => e.kind)).toEqual(["pods.evicted"]);
    expect([...plan.jobs.keys()].sort()).toEqual([J1, J2].sort());
  });

  it("a pod placed and taken back from the same node sends neither request and waits again", () => {
    const rows = rowsOf([jobRow(J1, { minMember: 1 })], [podRow(J1, "w-0")]);
    const pod = `${J1}/w-0`;
    const plan = planCommit(
      "c1",
      emptyResult({
        binds: [{ job: J1, pod, node: "n1", gpuGroups: [], gpuDevices: [], action: "allocate" }],
        evictions: [{ job: J1, pod, node: "n1", action: "consolidation", message: "moved" }],
        pods: [{ job: J1, pod, status: "Releasing", node: "n1", gpuGroups: [] }],
      }),
      rows,
    );
    expect(plan.pods).toEqual([]);
    expect(plan.requests).toEqual([]);
    expect(plan.events).toEqual([]);
  });

  it("a pod moved off a node stays RELEASING there, holding what it holds, until its eviction is confirmed", () => {
    // Consolidation moves a running pod: evicted from n1, pipelined (or bound) onto n2. It runs on
    // n1 until the agent evicts it: the books keep it there as RELEASING, so no later session
    // binds another pod onto what it still holds; it is placed again once it is gone.
    for (const placed of ["pipelined", "bound"] as const) {
      const rows = rowsOf(
        [jobRow(J1, { state: "RUNNING", minMember: 1 })],
        [podRow(J1, "w-0", { state: "RUNNING", nodeName: "n1", gpuGroups: ["n1-gpu-1"], gpuDevices: [] })],
      );
      const pod = `${J1}/w-0`;
      const status = placed === "pipelined" ? ("Pipelined" as const) : ("Binding" as const);
      const plan = planCommit(
        "c1",
        emptyResult({
          evictions: [{ job: J1, pod, node: "n1", action: "consolidation", message: "moved for b" }],
          ...(placed === "pipelined"
            ? { pipelines: [{ job: J1, pod, node: "n2", gpuGroups: ["n2-gpu-1"], action: "consolidation" }] }
            : {
                binds: [
                  {
                    job: J1,
                    pod,
                    node: "n2",
                    gpuGroups: ["n2-gpu-1"],
                    gpuDevices: [],
                    action: "consolidation",
                  },
                ],
              }),
          pods: [{ job: J1, pod, status, node: "n2", gpuGroups: ["n2-gpu-1"] }],
        }),
        rows,
      );
      expect(
        plan.pods.map((p) => [p.id, p.state, p.node, p.gpuGroups, p.message]),
        placed,
      ).toEqual([[pod, "RELEASING", "n1", ["n1-gpu-1"], "moved for b"]]);
      expect(
        plan.requests.map((r) => [r.kind, r.node, r.gpuGroups]),
        placed,
      ).toEqual([["EVICT", "n1", ["n1-gpu-1"]]]);
      expect(
        plan.events.map((e) => e.kind),
        placed,
      ).toEqual(["pods.evicted"]);
    }
  });

  it("a pod moved to another device of its node, or evicted again after a move, stays RELEASING on its own device", () => {
    // Consolidation moves a running GPU-memory pod to another device of the same node (evicted,
    // pipelined onto group 2), and reclaim evicts it again there: the session ends with it
    // releasing on group 2, or still pipelined there. It runs on group 4 until the agent evicts
    // it: written on group 2, the books would hold it on a device whose memory other pods hold
    // (over-committed there) and leave group 4 free for a bind while it still runs on it.
    for (const end of ["evicted again", "pipelined"] as const) {
      const pod = `${J1}/w-0`;
      const rows = rowsOf(
        [jobRow(J1, { state: "RUNNING", minMember: 1 })],
        [podRow(J1, "w-0", { state: "RUNNING", nodeName: "n1", gpuGroups: ["4"], gpuDevices: [] })],
      );
      const moved = { job: J1, pod, node: "n1", gpuGroups: ["2"], action: "consolidation" as const };
      const plan = planCommit(
        "c1",
        emptyResult({
          pipelines: [moved],
          evictions: [
            { job: J1, pod, node: "n1", action: "consolidation", message: "moved for b" },
            ...(end === "evicted again"
              ? [{ job: J1, pod, node: "n1", action: "reclaim" as const, message: "reclaimed for c" }]
              : []),
          ],
          pods: [
            {
              job: J1,
              pod,
              status: end === "pipelined" ? "Pipelined" : "Releasing",
              node: "n1",
              gpuGroups: ["2"],
            },
          ],
        }),
        rows,
      );
      expect(
        plan.pods.map((p) => [p.id, p.state, p.node, p.gpuGroups]),
        end,
      ).toEqual([[pod, "RELEASING", "n1", ["4"]]]);
      // One eviction, of the pod where it runs; no placement sent.
      expect(
        plan.requests.map((r) => [r.kind, r.node, r.gpuGroups]),
        end,
      ).toEqual([["EVICT", "n1", ["4"]]]);
    }
  });

  it("refreshes a job whose notes changed even when none of its pods did", () => {
    const rows = rowsOf([jobRow(J1)], [podRow(J1, "w-0")]);
    const plan = planCommit("c1", emptyResult({ jobs: [outcome(J1, { staleSince: 9_000 })] }), rows);
    expect(plan.pods).toEqual([]);
    expect([...plan.jobs.keys()]).toEqual([J1]);
    expect(plan.jobs.get(J1)?.staleSince).toEqual(new Date(9_000));
  });

  it("refuses a result naming a pod that is not in the cluster's rows", () => {
    const rows = rowsOf([jobRow(J1), jobRow(OTHER, { clusterName: "c2" })], [podRow(OTHER, "w-0")]);
    const pod = `${OTHER}/w-0`;
    expect(() =>
      planCommit(
        "c1",
        emptyResult({ binds: [{ job: OTHER, pod, node: "n1", gpuGroups: [], action: "allocate" }] }),
        rows,
      ),
    ).toThrow(`session result names pod ${pod} of job ${OTHER}, which is not on cluster c1`);
  });
});
