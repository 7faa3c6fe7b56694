// A payload's link: a job event's leads to the job's page on the dashboard (`#job=<id>`, the
// dashboard's route), a cluster event's to the dashboard; null without a public address.
import { describe, expect, it } from "vitest";
import { webhookPayload, type WebhookSourceEvent } from "../../src/store/domain/webhooks.js";

const job = {
  id: "3f0c2a9e-job/1",
  name: "train",
  queue: "vision",
  cluster: "c1",
  state: "FAILED",
  labels: {},
  createdAt: new Date("2026-01-01T00:00:00Z"),
  startedAt: new Date("2026-01-01T00:01:00Z"),
  finishedAt: new Date("2026-01-01T00:02:00Z"),
  restarts: 0,
  estimatedStart: null,
};
const event = (kind: string, withJob: boolean): WebhookSourceEvent => ({
  id: "7",
  at: new Date("2026-01-01T00:02:00Z"),
  kind,
  message: "it happened",
  queue: withJob ? "vision" : null,
  cluster: "c1",
  job: withJob ? job : null,
});

describe("the payload's link", () => {
  it("a job event's is the job's page on the dashboard", () => {
    expect(webhookPayload(event("job.failed", true), "https://fleetq.example.com").link).toBe(
      "https://fleetq.example.com/#job=3f0c2a9e-job%2F1",
    );
    // a dashboard served under a path keeps it
    expect(webhookPayload(event("job.failed", true), "https://example.com/fleetq/").link).toBe(
      "https://example.com/fleetq/#job=3f0c2a9e-job%2F1",
    );
  });

  it("a cluster event's is the dashboard; none without a public address", () => {
    expect(webhookPayload(event("cluster.lost", false), "https://fleetq.example.com").link).toBe(
      "https://fleetq.example.com",
    );
    expect(webhookPayload(event("job.failed", true), null).link).toBeNull();
    expect(webhookPayload(event("cluster.lost", false), null).link).toBeNull();
  });
});
