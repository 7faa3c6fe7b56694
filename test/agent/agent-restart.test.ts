// An agent killed mid-bind and restarted: every request ends up carried out and reported
// exactly once. The agent runs in a child process (SIGKILL, no goodbye) against the fake
// Kubernetes API server; the API is the recording GraphQL endpoint.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { clusterPodName } from "../../src/render/names.js";
import type { BindRequestMessage } from "../../src/protocol/bind-request.js";
import { TEST_REDIS_URL } from "../helpers/redis.js";
import { AGENT_TOKEN, AgentHarness, uuid } from "./agent-harness.js";
import { bindRequest } from "./bind-requests.js";
import { FakeKubeApiServer } from "./fake-kube-apiserver.js";
import { until } from "./until.js";

const FIXTURE = join(import.meta.dirname, "fixtures/agent-process.ts");

describe("agent killed mid-bind and restarted", () => {
  let harness: AgentHarness;
  let kube: FakeKubeApiServer;
  let dir: string;
  const children: ChildProcess[] = [];
  const logs: string[] = [];

  beforeEach(async () => {
    harness = await AgentHarness.start("c1");
    kube = await FakeKubeApiServer.start();
    kube.addNode({ name: "n1", gpus: 8 });
    kube.addNode({ name: "n2", gpus: 8 });
    dir = mkdtempSync(join(tmpdir(), "fleetq-agent-"));
    writeFileSync(join(dir, "kubeconfig"), kube.kubeconfigYaml());
  });

  afterEach(async () => {
    for (const child of children.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await once(child, "exit");
      }
    }
    await kube.stop();
    await harness.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function startAgent(): Promise<ChildProcess> {
    const child = spawn(process.execPath, ["--import", "tsx", FIXTURE], {
      env: {
        ...process.env,
        FLEETQ_TEST_AGENT: JSON.stringify({
          cluster: "c1",
          apiUrl: harness.api.url,
          token: AGENT_TOKEN,
          redis: TEST_REDIS_URL,
          queuePrefix: harness.queuePrefix,
          kubeconfig: join(dir, "kubeconfig"),
        }),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(child);
    child.stderr?.on("data", (chunk: Buffer) => logs.push(chunk.toString()));
    let out = "";
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes("ready")) resolve();
      });
      child.on("exit", (code) => reject(new Error(`agent exited (${code}) before ready:\n${logs.join("")}`)));
    });
    return child;
  }

  it("completes or reports each request exactly once", async () => {
    const first = await startAgent();

    // Before the crash: one pod bound and running, to be evicted later.
    const victim = bindRequest({ id: uuid(), jobId: uuid(), pod: "main-0", node: "n2" });
    await harness.send(victim);
    await until(async () => expect((await harness.counts()).completed).toBe(1));

    // Two binds and an eviction get stuck in the API server; a third bind goes through.
    const jobId = uuid();
    const applied = bindRequest({ id: uuid(), jobId, pod: "main-1", node: "n1" });
    const dropped = bindRequest({ id: uuid(), jobId, pod: "main-2", node: "n1" });
    const passes = bindRequest({ id: uuid(), jobId, pod: "main-3", node: "n2" });
    const evict = bindRequest({ id: uuid(), kind: "evict", jobId: victim.job.id, pod: "main-0", node: "n2" });
    const path = (r: BindRequestMessage, sub: string) => new RegExp(`/pods/${clusterPodName(r)}/${sub}$`);
    const heldApplied = kube.hold("POST", path(applied, "binding"));
    const heldDropped = kube.hold("POST", path(dropped, "binding"));
    const heldEviction = kube.hold("POST", path(victim, "eviction"));
    await harness.send(applied, dropped, passes, evict);
    await Promise.all([heldApplied.arrived, heldDropped.arrived, heldEviction.arrived]);
    await until(async () => expect((await harness.counts()).completed).toBe(2));

    // Killed with three requests half done.
    first.kill("SIGKILL");
    await once(first, "exit");
    // The API server still carries out what it had received for one bind and the eviction
    // (the client is gone: nobody learns of it); the other bind never happens.
    heldApplied.release("apply");
    heldEviction.release("apply");
    heldDropped.release("drop");
    await until(() => expect(kube.pod("team-a", clusterPodName(applied))?.spec.nodeName).toBe("n1"));
    expect(kube.pod("team-a", clusterPodName(victim))).toBeUndefined();
    expect(kube.pod("team-a", clusterPodName(dropped))?.spec.nodeName).toBeUndefined();
    // Work queued while no agent runs.
    const queued = bindRequest({ id: uuid(), jobId, pod: "main-4", node: "n2" });
    await harness.send(queued);

    await startAgent();
    await until(async () => expect((await harness.counts()).completed).toBe(6), 60_000);

    // Every request reported exactly once, and truthfully.
    const all = [victim, applied, dropped, passes, evict, queued];
    const reported = harness.api.bindResults();
    expect(reported.map((r) => r.bindRequest).sort()).toEqual(all.map((r) => r.id).sort());
    expect(reported.every((r) => r.ok)).toBe(true);
    expect(reported.find((r) => r.bindRequest === applied.id)?.message).toBe("already bound to n1");
    expect(reported.find((r) => r.bindRequest === dropped.id)?.message).toBe("bound to n1");
    expect(reported.find((r) => r.bindRequest === evict.id)?.message).toBe("the pod is already gone");
    // Every effect on a pod happened exactly once in the cluster, including those nobody heard of.
    const [v, a, d, p, q] = [victim, applied, dropped, passes, queued].map((r) => clusterPodName(r));
    expect(kube.effects.filter((e) => !e.includes(" service ")).sort()).toEqual(
      [
        `create team-a/${v}`,
        `bind team-a/${v} n2`,
        `create team-a/${a}`,
        `bind team-a/${a} n1`,
        `create team-a/${d}`,
        `bind team-a/${d} n1`,
        `create team-a/${p}`,
        `bind team-a/${p} n2`,
        `evict team-a/${v}`,
        `create team-a/${q}`,
        `bind team-a/${q} n2`,
      ].sort(),
    );
  }, 180_000); // two agent processes start (tsx) beside every other test file
});
