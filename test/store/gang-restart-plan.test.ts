// Gang restart decisions: what the failure of one pod does to a job with a restart policy
// (planGangFailure), and how a stored restart policy is read (restartPolicyOf).
import { describe, expect, it } from "vitest";
import {
  DEFAULT_RESTART_BACKOFF_SECONDS,
  type GangJob,
  type GangPod,
  type PodFailure,
  planGangFailure,
  type RestartPolicy,
  restartPolicyOf,
} from "../../src/store/domain/gang-restart.js";
import type { JobState } from "../../src/store/types.js";

const NOW = new Date("2025-03-14T12:00:00.000Z");

const policy = (over: Partial<RestartPolicy> = {}): RestartPolicy => ({
  maxRestarts: 3,
  backoffSeconds: 30,
  onExitCodes: null,
  ...over,
});

const gangJob = (over: Partial<GangJob> = {}): GangJob => ({
  id: "01a242e8-856f-7db7-a84d-87e75b35d763",
  name: "train",
  state: "RUNNING",
  restarts: 0,
  restartPolicy: policy(),
  ...over,
});

const pod = (name: string, state: GangPod["state"], nodeName: string | null): GangPod => ({
  id: `id-${name}`,
  name,
  state,
  nodeName,
});

/** A gang in every state a pod can be in when one of its pods fails. */
const PODS: GangPod[] = [
  pod("worker-0", "RUNNING", "n1"),
  pod("worker-1", "BINDING", "n2"),
  pod("worker-2", "RELEASING", "n3"),
  pod("worker-3", "PENDING", null),
  pod("worker-4", "PIPELINED", "n4"),
  pod("worker-5", "FAILED", "n5"),
  pod("worker-6", "SUCCEEDED", "n6"),
  pod("worker-7", "RUNNING", null),
];
const EVICTED = ["worker-0", "worker-1"];
const RESET = ["worker-4", "worker-5", "worker-6", "worker-7"];

const failure = (over: Partial<PodFailure> = {}): PodFailure => ({
  pod: "worker-5",
  exitCode: 1,
  node: "n5",
  message: "Error",
  ...over,
});

const names = (pods: readonly GangPod[]) => pods.map((p) => p.name);

describe("planGangFailure", () => {
  it("does nothing for a job without a restart policy", () => {
    expect(planGangFailure(gangJob({ restartPolicy: null }), PODS, failure(), NOW)).toEqual({ kind: "none" });
  });

  it.each<JobState>(["SUCCEEDED", "FAILED", "CANCELLED"])("does nothing for a job in state %s", (state) => {
    expect(planGangFailure(gangJob({ state }), PODS, failure(), NOW)).toEqual({ kind: "none" });
    expect(planGangFailure(gangJob({ state, restarts: 99 }), PODS, failure(), NOW)).toEqual({ kind: "none" });
  });

  it.each<JobState>([
    "PENDING",
    "ADMITTED",
    "RUNNING",
  ])("restarts a job in state %s with restarts left", (state) => {
    const decision = planGangFailure(gangJob({ state }), PODS, failure(), NOW);
    expect(decision.kind).toBe("restart");
  });

  it.each([
    { restarts: 0, maxRestarts: 1, backoffSeconds: 10 },
    { restarts: 0, maxRestarts: 3, backoffSeconds: 30 },
    { restarts: 2, maxRestarts: 3, backoffSeconds: 30 },
    { restarts: 4, maxRestarts: 10, backoffSeconds: 1.5 },
  ])("restart $restarts of $maxRestarts used: restarts again after $backoffSeconds seconds", ({
    restarts,
    maxRestarts,
    backoffSeconds,
  }) => {
    const job = gangJob({ restarts, restartPolicy: policy({ maxRestarts, backoffSeconds }) });
    const decision = planGangFailure(job, PODS, failure(), NOW);
    if (decision.kind !== "restart") throw new Error(`expected a restart, got ${decision.kind}`);
    expect(decision.restarts).toBe(restarts + 1);
    expect(decision.restartAfter.getTime()).toBe(NOW.getTime() + backoffSeconds * 1000);
    expect(names(decision.evict)).toEqual(EVICTED);
    expect(names(decision.reset)).toEqual(RESET);
    expect(decision.message).toContain("worker-5");
    expect(decision.message).toContain(`${backoffSeconds}s`);
  });

  it("evicts the pods on a node (BINDING, RUNNING) and resets the others but RELEASING and PENDING ones", () => {
    const decision = planGangFailure(gangJob(), PODS, failure(), NOW);
    if (decision.kind !== "restart") throw new Error(`expected a restart, got ${decision.kind}`);
    for (const p of decision.evict) {
      expect(["BINDING", "RUNNING"]).toContain(p.state);
      expect(p.nodeName).not.toBeNull();
    }
    const evicted = new Set(decision.evict.map((p) => p.id));
    for (const p of decision.reset) {
      expect(evicted.has(p.id)).toBe(false);
      expect(["RELEASING", "PENDING"]).not.toContain(p.state);
    }
    // Every pod is in exactly one of evict, reset, or left alone (RELEASING, PENDING).
    const untouched = PODS.filter((p) => !evicted.has(p.id) && !decision.reset.includes(p));
    expect(names(untouched)).toEqual(["worker-2", "worker-3"]);
    // The pods are handed back as given.
    expect(decision.evict[0]).toBe(PODS[0]);
  });

  it.each([
    { what: "only RELEASING and PENDING pods", pods: [PODS[2]!, PODS[3]!], evict: [], reset: [] },
    { what: "only running pods", pods: [PODS[0]!, PODS[1]!], evict: EVICTED, reset: [] },
    { what: "no pods", pods: [], evict: [], reset: [] },
  ])("a gang of $what", ({ pods, evict, reset }) => {
    const decision = planGangFailure(gangJob(), pods, failure(), NOW);
    if (decision.kind !== "restart") throw new Error(`expected a restart, got ${decision.kind}`);
    expect(names(decision.evict)).toEqual(evict);
    expect(names(decision.reset)).toEqual(reset);
  });

  it.each([
    { restarts: 0, maxRestarts: 0 },
    { restarts: 3, maxRestarts: 3 },
    { restarts: 5, maxRestarts: 3 },
  ])("fails the job with $restarts of $maxRestarts restarts used", ({ restarts, maxRestarts }) => {
    const job = gangJob({ restarts, restartPolicy: policy({ maxRestarts }) });
    const decision = planGangFailure(job, PODS, failure({ pod: "worker-5", exitCode: 3 }), NOW);
    expect(decision.kind).toBe("fail");
    if (decision.kind !== "fail") return;
    expect(decision.message).toMatch(/no restarts left/);
    expect(decision.message).toContain("worker-5");
    expect(decision.message).toContain("exit code 3");
    expect(decision.message).toContain(`${restarts} of ${maxRestarts}`);
  });

  it.each([
    { onExitCodes: [137], exitCode: 1, kind: "fail" },
    { onExitCodes: [137, 143], exitCode: 2, kind: "fail" },
    { onExitCodes: [137, 143], exitCode: 0, kind: "fail" },
    { onExitCodes: [137], exitCode: 137, kind: "restart" },
    { onExitCodes: [137, 143], exitCode: 143, kind: "restart" },
    { onExitCodes: [137], exitCode: null, kind: "restart" },
    { onExitCodes: null, exitCode: 1, kind: "restart" },
    { onExitCodes: null, exitCode: null, kind: "restart" },
  ])("onExitCodes $onExitCodes, exit code $exitCode: $kind", ({ onExitCodes, exitCode, kind }) => {
    const job = gangJob({ restartPolicy: policy({ onExitCodes }) });
    const f = failure({ exitCode, ...(exitCode === null ? { message: "pod vanished", node: null } : {}) });
    const decision = planGangFailure(job, PODS, f, NOW);
    expect(decision.kind).toBe(kind);
    if (decision.kind === "fail") {
      expect(decision.message).toContain(`exit code ${exitCode}`);
      expect(decision.message).toContain("not one that restarts");
      expect(decision.message).toContain("worker-5");
    }
    if (decision.kind === "restart") expect(decision.restarts).toBe(1);
  });

  it("fails on an exit code outside onExitCodes even with restarts left, and names the code", () => {
    const job = gangJob({ restarts: 0, restartPolicy: policy({ maxRestarts: 5, onExitCodes: [137] }) });
    const decision = planGangFailure(job, PODS, failure({ exitCode: 42 }), NOW);
    expect(decision).toEqual({ kind: "fail", message: expect.stringContaining("exit code 42") });
  });

  it("restarts at once when the backoff is 0", () => {
    const job = gangJob({ restartPolicy: policy({ backoffSeconds: 0 }) });
    const decision = planGangFailure(job, PODS, failure(), NOW);
    if (decision.kind !== "restart") throw new Error(`expected a restart, got ${decision.kind}`);
    expect(decision.restartAfter.getTime()).toBe(NOW.getTime());
    expect(decision.restartAfter).not.toBe(NOW);
    expect(decision.message).not.toMatch(/0s have passed/);
  });

  it("does not change the pods it is given", () => {
    const before = structuredClone(PODS);
    planGangFailure(gangJob(), PODS, failure(), NOW);
    expect(PODS).toEqual(before);
  });
});

describe("restartPolicyOf", () => {
  it.each([
    {
      what: "a full policy",
      stored: { maxRestarts: 3, backoffSeconds: 5, onExitCodes: [137, 143] },
      policy: { maxRestarts: 3, backoffSeconds: 5, onExitCodes: [137, 143] },
    },
    {
      what: "a policy without backoffSeconds",
      stored: { maxRestarts: 2 },
      policy: { maxRestarts: 2, backoffSeconds: 10, onExitCodes: null },
    },
    {
      what: "a zero backoff",
      stored: { maxRestarts: 0, backoffSeconds: 0 },
      policy: { maxRestarts: 0, backoffSeconds: 0, onExitCodes: null },
    },
    {
      what: "a null backoff and onExitCodes",
      stored: { maxRestarts: 1, backoffSeconds: null, onExitCodes: null },
      policy: { maxRestarts: 1, backoffSeconds: 10, onExitCodes: null },
    },
    {
      what: "onExitCodes that is not a list",
      stored: { maxRestarts: 1, backoffSeconds: 7, onExitCodes: "137" },
      policy: { maxRestarts: 1, backoffSeconds: 7, onExitCodes: null },
    },
    {
      what: "a backoff that is not a number",
      stored: { maxRestarts: 4, backoffSeconds: "30" },
      policy: { maxRestarts: 4, backoffSeconds: 10, onExitCodes: null },
    },
  ])("reads $what", ({ stored, policy: expected }) => {
    expect(DEFAULT_RESTART_BACKOFF_SECONDS).toBe(10);
    expect(restartPolicyOf(stored)).toEqual(expected);
    expect(restartPolicyOf(JSON.parse(JSON.stringify(stored)))).toEqual(expected);
  });

  it.each([
    { what: "null", stored: null },
    { what: "undefined", stored: undefined },
    { what: "a string", stored: '{"maxRestarts":3}' },
    { what: "a number", stored: 3 },
    { what: "a boolean", stored: true },
    { what: "a list", stored: [{ maxRestarts: 3 }] },
    { what: "an object without maxRestarts", stored: { backoffSeconds: 5 } },
    { what: "an object whose maxRestarts is not a number", stored: { maxRestarts: "3" } },
    { what: "an empty object", stored: {} },
  ])("is null for $what", ({ stored }) => {
    expect(restartPolicyOf(stored)).toBeNull();
  });

  it("feeds planGangFailure: a stored policy restarts after its default backoff", () => {
    const restartPolicy = restartPolicyOf({ maxRestarts: 1 });
    const decision = planGangFailure(gangJob({ restartPolicy }), PODS, failure(), NOW);
    if (decision.kind !== "restart") throw new Error(`expected a restart, got ${decision.kind}`);
    expect(decision.restartAfter.getTime()).toBe(NOW.getTime() + 10_000);
    const exhausted = planGangFailure(gangJob({ restartPolicy, restarts: 1 }), PODS, failure(), NOW);
    expect(exhausted.kind).toBe("fail");
  });
});
