// The other webhook events end to end (real API, workers, simulated cluster and agent, a receiver
// on 127.0.0.1 behind an ADMIN's webhook): a job's pods reclaimed by another team
// (job.preempted), a gang restarted after a pod failed (job.restarted), and the cluster's agent
// falling silent (cluster.lost).
import { afterAll, beforeAll, expect, it } from "vitest";
import { until } from "../agent/until.js";
import { WebhookReceiver } from "../helpers/webhook-receiver.js";
import { type ControlPlane, fillWithTeamA, gpuJob, twoTeamsOnOneCluster } from "./harness.js";

let cp: ControlPlane;
let rx: WebhookReceiver;

beforeAll(async () => {
  rx = await WebhookReceiver.start();
  cp = await twoTeamsOnOneCluster({
    webhookIntervalMs: 300,
    webhookBackoffMs: 200,
    clusterLostAfterMs: 8000,
    lostCheckIntervalMs: 300,
  });
  await cp.admin("mutation($i: WebhookInput!) { createWebhook(input: $i) { id } }", {
    i: {
      url: rx.url,
      events: ["JOB_PREEMPTED", "JOB_RESTARTED", "CLUSTER_LOST"],
      allowPrivateTargets: true,
    },
  });
}, 180_000);
afterAll(async () => {
  await rx?.close();
  await cp?.close();
});

const bodies = (event: string) => rx.requests.map((r) => JSON.parse(r.body)).filter((b) => b.event === event);

it("tells of each of team-a's jobs whose pods team-b reclaims", async () => {
  const teamA = await fillWithTeamA(cp);
  await cp.submit(gpuJob("b-gang", "team-b", 4, 1));
  const preempted = await until(() => {
    const b = bodies("job.preempted");
    expect(b).toHaveLength(4);
    return b;
  }, 90_000);
  for (const b of preempted) {
    expect(teamA).toContain(b.job.id);
    expect(b).toMatchObject({ queue: "team-a", cluster: "c1", job: { queue: "team-a" } });
    expect(b.text).toBe(
      `[fleetq] job ${b.job.name} (queue team-a, cluster c1) preempted: its pods are being evicted`,
    );
  }
  expect(new Set(preempted.map((b) => b.job.id)).size).toBe(4);
}, 120_000);

it("tells of a gang restarted after a pod failed", async () => {
  const id = await cp.submit({
    name: "flaky",
    queue: "team-b",
    cluster: "c1",
    restartPolicy: { maxRestarts: 1, backoffSeconds: 0 },
    tasks: [
      {
        name: "w",
        replicas: 1,
        resources: { cpu: 500, memory: "1Gi" },
        durationSeconds: 1,
        exitFailureAttempts: 1,
      },
    ],
  });
  const [restarted] = await until(() => {
    const b = bodies("job.restarted");
    expect(b).toHaveLength(1);
    return b;
  }, 90_000);
  expect(restarted).toMatchObject({ job: { id, name: "flaky", queue: "team-b" } });
  expect(restarted.text).toBe("[fleetq] job flaky (queue team-b, cluster c1) restarted (attempt 2)");
  expect(restarted.message).toMatch(/restart 1 of 1/);
  await cp.jobInState(id, "SUCCEEDED", 90_000);
}, 120_000);

it("tells of the cluster lost when its agent falls silent", async () => {
  await cp.stopAgent("c1");
  const [lost] = await until(() => {
    const b = bodies("cluster.lost");
    expect(b).toHaveLength(1);
    return b;
  }, 90_000);
  expect(lost).toMatchObject({ cluster: "c1", job: null, queue: null });
  expect(lost.text).toMatch(/^\[fleetq\] cluster c1 lost: /);
}, 120_000);
