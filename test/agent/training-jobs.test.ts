// Distributed training jobs end to end, against the real API (real PostgreSQL, real Redis), real
// scheduling cycles and the fake Kubernetes API server: a gang's headless Service, its pods'
// hostnames and rendezvous environment, gang restarts (and what does not count as one), the
// Service going with the job's last pod, and pod logs read, tailed and followed through the agent.
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubernetesBackend } from "../../src/agent/backends/kubernetes/kubernetes-backend.js";
import { jobServiceName, uniquePodName } from "../../src/render/index.js";
import { markLostClusters, releaseRestartHolds } from "../../src/store/index.js";
import { gql, gqlOk, wsClient } from "../helpers/api.js";
import { TEST_REDIS_URL } from "../helpers/redis.js";
import { Redis } from "ioredis";
import { type ApiAgent, startApiAgent } from "./api-agent.js";
import { CONTAINER_TEMPLATE } from "./bind-requests.js";
import type { Json } from "./fake-kube-store.js";
import { FakeKubeApiServer } from "./fake-kube-apiserver.js";
import { until } from "./until.js";

const log = pino({ level: process.env.AGENT_TEST_LOG ?? "silent" });
const workers = { name: "restart-check" };

interface JobView {
  id: string;
  name: string;
  state: string;
  restarts: number;
  attempt: number;
  pods: {
    name: string;
    state: string;
    node: string | null;
    message: string | null;
    exitCode: number | null;
  }[];
  events: { kind: string; message: string }[];
}

const JOB = `query($id: ID!) { job(id: $id) { id name state restarts attempt
  pods { name state node message exitCode } events(first: 50) { kind message } } }`;

describe("training jobs on Kubernetes", () => {
  let env: ApiAgent;
  let kube: FakeKubeApiServer;
  let member = "";
  let otherMember = "";
  let viewer = "";

  const admin = <T>(query: string, variables: Record<string, unknown> = {}) => env.admin<T>(query, variables);
  const job = async (id: string) => (await admin<{ job: JobView }>(JOB, { id })).job;
  /** What the workers do between cycles: let restarted gangs go. */
  const releaseHolds = () => releaseRestartHolds(env.api.server.store, workers);
  /** Cycles and dispatches until nothing more is placed or evicted. */
  const schedule = async () => {
    for (let i = 0; i < 5; i++) {
      await env.cycle();
      if ((await env.dispatch()) === 0) return;
    }
  };

  async function submit(input: Record<string, unknown>): Promise<string> {
    const r = await admin<{ submitJob: { id: string } }>(
      "mutation($input: SubmitJobInput!) { submitJob(input: $input) { id } }",
      { input: { queue: "train", cluster: "c1", namespace: "ml", ...input } },
    );
    return r.submitJob.id;
  }

  const task = (name: string, replicas: number, gpu = 1) => ({
    name,
    replicas,
    resources: { cpu: 1000, memory: "1Gi", gpu },
    template: CONTAINER_TEMPLATE,
  });
  const podsOf = (id: string) =>
    kube.store.list("pods", (p) => p.metadata.labels?.["fleetq.io/job-id"] === id) as Json[];
  /** The job's pod of that control-plane name, of the attempt after `restarts` restarts. */
  const podNamed = (id: string, name: string, restarts = 0) =>
    podsOf(id).find(
      (p) => p.metadata.annotations["fleetq.io/pod-name"] === name && restartsOf(p) === restarts,
    );
  const restartsOf = (p: Json) =>
    Number(
      (p.spec.containers[0].env as { name: string; value: string }[]).find(
        (e) => e.name === "FLEETQ_RESTART_ATTEMPT",
      )?.value,
    );
  const envOf = (p: Json) =>
    Object.fromEntries(
      (p.spec.containers[0].env as { name: string; value: string }[]).map((e) => [e.name, e.value]),
    );

  beforeAll(async () => {
    kube = await FakeKubeApiServer.start();
    for (const name of ["n1", "n2", "n3", "n4"]) kube.addNode({ name, gpus: 8 });
    env = await startApiAgent({
      label: "fleetq-training-jobs",
      queue: "train",
      backend: new KubernetesBackend({
        cluster: "c1",
        kubeConfig: kube.kubeConfig(),
        defaultNamespace: "default",
        log,
        groupDebounceMs: 20,
        // Finished pods go soon: the job's Service goes with the last of them. Not too soon: a
        // restarted gang's failed pod must still be there when the test looks at it.
        finishedPodTtlMs: 3000,
      }),
      logger: log,
    });
    await admin(`mutation { updateQueue(name: "train", input: { namespaces: ["ml"] }) { name } }`);
    await admin(`mutation { createQueue(input: { name: "other", namespaces: ["ml"] }) { name } }`);
    const token = async (name: string, role: string, queues?: string[]) =>
      (
        await admin<{ createToken: { secret: string } }>(
          "mutation($input: CreateTokenInput!) { createToken(input: $input) { secret } }",
          { input: { name, role, ...(queues ? { queues } : {}) } },
        )
      ).createToken.secret;
    member = await token("trainer", "MEMBER", ["train"]);
    otherMember = await token("stranger", "MEMBER", ["other"]);
    viewer = await token("watcher", "VIEWER");
    await env.untilNodes(4);
  });

  afterAll(async () => {
    await env?.close();
    await kube?.stop();
  });

  it("gives a gang a headless Service, stable hostnames and the rendezvous environment; the Service goes with its pods", async () => {
    const id = await submit({
      name: "ddp",
      rendezvousPort: 23456,
      tasks: [task("master", 1), task("worker", 2)],
    });
    await schedule();
    await until(async () => expect((await job(id)).state).toBe("RUNNING"));

    const service = jobServiceName(id, "ddp");
    const svc = kube.service("ml", service)!;
    expect(svc.spec).toMatchObject({
      clusterIP: "None",
      publishNotReadyAddresses: true,
      selector: { "fleetq.io/job-id": id },
    });
    const pods = podsOf(id);
    expect(pods).toHaveLength(3);
    // Owned by every pod of the job: the garbage collector keeps it while any of them is there.
    expect(svc.metadata.ownerReferences.map((o: Json) => o.uid).sort()).toEqual(
      pods.map((p) => p.metadata.uid).sort(),
    );
    const expected: [string, number, number][] = [
      ["master-0", 0, 0],
      ["worker-0", 1, 0],
      ["worker-1", 2, 1],
    ];
    const peers = expected.map(([pod]) => `${pod}.${service}`).join(",");
    for (const [name, rank, index] of expected) {
      const pod = podNamed(id, name)!;
      expect(pod.spec.hostname).toBe(name);
      expect(pod.spec.subdomain).toBe(service);
      expect(envOf(pod)).toMatchObject({
        FLEETQ_JOB_ID: id,
        FLEETQ_JOB_NAME: "ddp",
        FLEETQ_TASK: name.split("-")[0],
        FLEETQ_TASK_INDEX: String(index),
        FLEETQ_RANK: String(rank),
        FLEETQ_WORLD_SIZE: "3",
        FLEETQ_RESTART_ATTEMPT: "0",
        FLEETQ_PEERS: peers,
        MASTER_ADDR: `master-0.${service}`,
        MASTER_PORT: "23456",
        WORLD_SIZE: "3",
        RANK: String(rank),
        PET_NNODES: "3",
        PET_NODE_RANK: String(rank),
        PET_MASTER_ADDR: `master-0.${service}`,
        PET_MASTER_PORT: "23456",
        JOB_COMPLETION_INDEX: String(index),
      });
    }
    // What the API shows of a pod's environment is what the agent set.
    const shown = await gqlOk<{
      job: { pods: { name: string; environment: { name: string; value: string }[] }[] };
    }>(env.api.url, member, "query($id: ID!) { job(id: $id) { pods { name environment { name value } } } }", {
      id,
    });
    for (const p of shown.job.pods)
      expect(Object.fromEntries(p.environment.map((e) => [e.name, e.value]))).toEqual(
        Object.fromEntries(
          Object.entries(envOf(podNamed(id, p.name)!)).filter(([k]) => k !== "NVIDIA_VISIBLE_DEVICES"),
        ),
      );

    for (const p of pods) kube.setPodPhase("ml", p.metadata.name, "Succeeded");
    await until(async () => expect((await job(id)).state).toBe("SUCCEEDED"));
    // The finished pods are deleted after their time; the garbage collector takes the Service.
    await until(() => expect(kube.service("ml", service)).toBeUndefined());
    expect(kube.effects).toContain(`collect service ml/${service}`);
  });

  it("restarts the whole gang when a pod fails, with the next attempt's names and environment, until maxRestarts", async () => {
    const id = await submit({
      name: "flaky",
      restartPolicy: { maxRestarts: 1, backoffSeconds: 0 },
      tasks: [task("worker", 2)],
    });
    await schedule();
    await until(async () => expect((await job(id)).state).toBe("RUNNING"));
    const first = podNamed(id, "worker-1")!;
    kube.setPodPhase("ml", first.metadata.name, "Failed", "Error", new Date(), 3);

    // Every pod of the gang stops: the failed one is pending again, the other is evicted.
    await until(async () => expect((await job(id)).restarts).toBe(1));
    await schedule();
    await until(async () => {
      const j = await job(id);
      expect(j.pods.map((p) => p.state)).toEqual(["PENDING", "PENDING"]);
    });
    expect(kube.effects).toContain(`evict ml/${uniquePodName(id, "flaky", "worker-0")}`);
    let j = await job(id);
    expect(j.attempt).toBe(2);
    const restarted = j.events.find((e) => e.kind === "job.restarted")!;
    expect(restarted.message).toContain("pod worker-1 failed with exit code 3");
    expect(restarted.message).toContain("restart 1 of 1");

    // The next attempt: placed once the hold is released, under new names, attempt 1 in its environment.
    expect((await releaseHolds()).jobs).toBe(1);
    await schedule();
    await until(async () => expect((await job(id)).state).toBe("RUNNING"));
    for (const name of ["worker-0", "worker-1"]) {
      const pod = kube.pod("ml", uniquePodName(id, "flaky", name, 1))!;
      expect(pod.metadata.name).toMatch(/-r1$/);
      expect(envOf(pod).FLEETQ_RESTART_ATTEMPT).toBe("1");
    }
    // The failed pod of the first attempt is still there (its log: logs --previous).
    expect(kube.pod("ml", first.metadata.name)?.status.phase).toBe("Failed");

    // A second failure: no restarts left, the job fails and the rest of the gang is stopped.
    kube.setPodPhase("ml", uniquePodName(id, "flaky", "worker-0", 1), "Failed", "Error", new Date(), 1);
    await until(async () => expect((await job(id)).state).toBe("FAILED"));
    j = await job(id);
    expect(j.restarts).toBe(1);
    expect(j.events.find((e) => e.kind === "job.failed")?.message).toContain(
      "no restarts left (1 of 1 used)",
    );
    await schedule();
    await until(async () =>
      expect((await job(id)).pods.map((p) => [p.name, p.state, p.exitCode])).toEqual([
        ["worker-0", "FAILED", 1],
        ["worker-1", "FAILED", null],
      ]),
    );
  });

  it("does not count an eviction the scheduler made as a failure, whatever the pod's exit", async () => {
    const low = await submit({
      name: "low",
      restartPolicy: { maxRestarts: 0 },
      tasks: [task("worker", 4, 8)],
    });
    await schedule();
    await until(async () => expect((await job(low)).state).toBe("RUNNING"));
    // A job of higher priority in the same queue needs a node: preemption evicts pods of the low gang.
    const high = await submit({ name: "high", priority: 90, tasks: [task("worker", 1, 8)] });
    await env.cycle();
    const evicted = (await job(low)).pods.filter((p) => p.state === "RELEASING").map((p) => p.name);
    expect(evicted.length).toBeGreaterThan(0);
    // The evicted containers exit non-zero on SIGTERM before their pods are gone.
    for (const name of evicted)
      kube.setPodPhase("ml", podNamed(low, name)!.metadata.name, "Failed", "Error", new Date(), 143);
    await until(async () => {
      const j = await job(low);
      expect(j.pods.filter((p) => evicted.includes(p.name)).map((p) => p.state)).toEqual(
        evicted.map(() => "PENDING"),
      );
    });
    await schedule();
    const j = await job(low);
    expect(j.restarts).toBe(0);
    expect(j.state).not.toBe("FAILED");
    expect(j.events.some((e) => e.kind === "job.restarted" || e.kind === "job.failed")).toBe(false);
    await until(async () => expect((await job(high)).state).toBe("RUNNING"));
    await admin("mutation($id: ID!) { cancelJob(id: $id) { id } }", { id: low });
    await admin("mutation($id: ID!) { cancelJob(id: $id) { id } }", { id: high });
    await schedule();
  });

  describe("logs", () => {
    let id = "";
    let pod = "";
    const LOGS = `query($job: ID!, $pod: String!, $tail: Int, $ts: Boolean, $previous: Boolean) {
      podLogs(job: $job, pod: $pod, tailLines: $tail, timestamps: $ts, previous: $previous) }`;
    const logs = (token: string, vars: Record<string, unknown> = {}) =>
      gql<{ podLogs: string }>(env.api.url, token, LOGS, { job: id, pod: "worker-0", ...vars });

    beforeAll(async () => {
      id = await submit({ name: "chatty", tasks: [task("worker", 1)] });
      await schedule();
      await until(async () => expect((await job(id)).state).toBe("RUNNING"));
      pod = podNamed(id, "worker-0")!.metadata.name;
      for (let i = 1; i <= 5; i++) kube.writeLog("ml", pod, `step ${i}`);
    });

    it("reads a pod's log, its tail and with timestamps", async () => {
      expect((await logs(member)).data?.podLogs).toBe("step 1\nstep 2\nstep 3\nstep 4\nstep 5\n");
      expect((await logs(member, { tail: 2 })).data?.podLogs).toBe("step 4\nstep 5\n");
      const stamped = (await logs(env.api.adminToken, { ts: true })).data!.podLogs.split("\n")[0]!;
      expect(stamped).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z step 1$/);
    });

    it("ends a followed read at once when its reader leaves, on the agent too", async () => {
      const redis = new Redis(TEST_REDIS_URL);
      const live = () => redis.keys(`${env.queuePrefix}-agent:c1:requests:live:*`);
      try {
        const client = wsClient(env.api.url, member);
        const lines: string[] = [];
        client.subscribe<{ podLogLines: { line: string } }>(
          {
            query: `subscription($job: ID!) { podLogLines(job: $job, pod: "worker-0", tailLines: 1) { line } }`,
            variables: { job: id },
          },
          {
            next: (m) => void (m.data && lines.push(m.data.podLogLines.line)),
            error: () => {},
            complete: () => {},
          },
        );
        await until(() => expect(lines).toEqual(["step 5"]));
        expect(await live()).toHaveLength(1);
        // The reader leaves while the pod is quiet: no line comes to end the read by the way.
        await client.dispose();
        await until(async () => expect(await live()).toEqual([]), 5000);
      } finally {
        redis.disconnect();
      }
    });

    it("follows a pod's log as it is written, to the end of its run", async () => {
      const client = wsClient(env.api.url, member);
      const lines: { line: string; end: string | null }[] = [];
      const done = new Promise<void>((resolve, reject) => {
        client.subscribe<{ podLogLines: { line: string; end: string | null } }>(
          {
            query: `subscription($job: ID!) { podLogLines(job: $job, pod: "worker-0", tailLines: 1) { line end } }`,
            variables: { job: id },
          },
          {
            next: (m) =>
              m.data ? lines.push(m.data.podLogLines) : reject(new Error(JSON.stringify(m.errors))),
            error: reject,
            complete: resolve,
          },
        );
      });
      await until(() => expect(lines).toEqual([{ line: "step 5", end: null }]));
      kube.writeLog("ml", pod, "step 6");
      kube.writeLog("ml", pod, "step 7");
      await until(() => expect(lines.map((l) => l.line)).toEqual(["step 5", "step 6", "step 7"]));
      kube.setPodPhase("ml", pod, "Succeeded");
      await done;
      expect(lines.at(-1)).toEqual({ line: "", end: "the pod's run ended" });
      await client.dispose();
    });

    it("refuses VIEWERs, MEMBERs of other queues, pods that never started, and LOST clusters, naming why", async () => {
      const refused = async (token: string, vars: Record<string, unknown> = {}) => {
        const r = await logs(token, vars);
        expect(r.data?.podLogs ?? null).toBeNull();
        return { code: r.errors?.[0]?.extensions?.code, message: r.errors?.[0]?.message ?? "" };
      };
      expect(await refused(viewer)).toMatchObject({
        code: "FORBIDDEN",
        message: expect.stringContaining("secrets"),
      });
      expect(await refused(otherMember)).toMatchObject({
        code: "FORBIDDEN",
        message: expect.stringContaining("train"),
      });
      expect(await refused(member, { previous: true })).toMatchObject({
        code: "BAD_USER_INPUT",
        message: expect.stringContaining("no previous attempt"),
      });

      // A gang that cannot be placed: its pods never started.
      const waiting = await submit({ name: "huge", tasks: [task("worker", 9, 8)] });
      await env.cycle();
      const r = await gql(env.api.url, member, LOGS, { job: waiting, pod: "worker-0" });
      expect(r.errors?.[0]?.extensions?.code).toBe("CONFLICT");
      expect(r.errors?.[0]?.message).toContain("has not started");
      await admin("mutation($id: ID!) { cancelJob(id: $id) { id } }", { id: waiting });

      // The cluster's agent falls silent for longer than the lost-cluster timeout.
      await markLostClusters(
        env.api.server.store,
        { name: "lost-check" },
        { now: new Date(Date.now() + 3_600_000), lostAfterMs: 1 },
      );
      expect(await refused(member)).toMatchObject({
        code: "CONFLICT",
        message: expect.stringContaining("cluster c1 is LOST"),
      });
    });
  });
});
