// queueShareHistory over HTTP on real PostgreSQL: the workers' usage recorder samples each queue's
// deserved share, fair share and allocation per cluster; minutes older than a day come back as
// hourly averages, samples older than a week are gone; every role reads it, bad input is refused
// naming the argument.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { defaultSchedulerConfig } from "../../src/core/index.js";
import { recordUsage } from "../../workers/index.js";
import {
  gql,
  gqlOk,
  registerClusterWithAgent,
  reportNodes,
  startTestApi,
  type TestApi,
} from "../helpers/api.js";
import { runCycle } from "../helpers/cycle.js";

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

let t: TestApi;
const tokens: Record<string, string> = {};
const HOUR = 3600_000;
const NOW = new Date(Math.floor(Date.now() / 60_000) * 60_000 + 30_000);
const HISTORY = `query($queue: String!, $cluster: String!, $from: String!, $to: String!) {
  queueShareHistory(queue: $queue, cluster: $cluster, from: $from, to: $to) {
    at spanSeconds deserved { gpu } fairShare { gpu } allocated { gpu cpu } } }`;
interface Sample {
  at: string;
  spanSeconds: number;
  deserved: { gpu: number };
  fairShare: { gpu: number };
  allocated: { gpu: number; cpu: number };
}
const history = (token: string, vars: Record<string, string>) =>
  gql<{ queueShareHistory: Sample[] }>(t.url, token, HISTORY, {
    queue: "team",
    cluster: "c1",
    from: new Date(NOW.getTime() - 10 * 24 * HOUR).toISOString(),
    to: NOW.toISOString(),
    ...vars,
  });
const ok = (q: string, v: Record<string, unknown> = {}) => gqlOk(t.url, t.adminToken, q, v);
const record = (at: Date) => recordUsage(t.server.store, defaultSchedulerConfig(), 60, { now: at });

beforeAll(async () => {
  t = await startTestApi();
  await ok('mutation { createQueue(input: { name: "team" }) { name } }');
  await ok('mutation { setQueueQuota(input: { queue: "team", resource: GPU, deserved: 4 }) { name } }');
  const agent = await registerClusterWithAgent(t, "c1");
  await reportNodes(t, agent, "c1", [{ name: "gpu-0", capacity: { cpu: 32000, memory: "256Gi", gpu: 8 } }]);
  await ok(
    'mutation { submitJob(input: { name: "j", queue: "team", cluster: "c1", tasks: [{ name: "w", replicas: 1, resources: { cpu: 1000, memory: "1Gi", gpu: 2 } }] }) { id } }',
  );
  await runCycle(t.server.store, "c1");
  tokens.AGENT = agent;
  for (const role of ["VIEWER", "MEMBER"]) {
    const r = await gqlOk<{ createToken: { secret: string } }>(
      t.url,
      t.adminToken,
      "mutation($n: String!, $r: Role!, $q: [String!]) { createToken(input: { name: $n, role: $r, queues: $q }) { secret } }",
      { n: `t-${role}`, r: role, q: role === "MEMBER" ? ["team"] : null },
    );
    tokens[role] = r.createToken.secret;
  }
  // Eight days ago (pruned by the last sample), two minutes of one hour 30 hours ago (folded into
  // that hour), and now.
  await record(new Date(NOW.getTime() - 8 * 24 * HOUR));
  const old = new Date(Math.floor((NOW.getTime() - 30 * HOUR) / HOUR) * HOUR + 5 * 60_000);
  await record(old);
  await record(new Date(old.getTime() + 60_000));
  await record(NOW);
});
afterAll(async () => t?.close());

describe("queueShareHistory", () => {
  it("gives the hour folded, the last minute as sampled, and nothing past the week", async () => {
    const r = await history(t.adminToken, {});
    expect(r.errors).toBeUndefined();
    const samples = r.data!.queueShareHistory;
    const hour = new Date(Math.floor((NOW.getTime() - 30 * HOUR) / HOUR) * HOUR).toISOString();
    const minute = new Date(Math.floor(NOW.getTime() / 60_000) * 60_000).toISOString();
    expect(samples.map((s) => [s.at, s.spanSeconds])).toEqual([
      [hour, 3600],
      [minute, 60],
    ]);
    for (const s of samples) {
      expect(s.deserved.gpu).toBe(4);
      expect(s.allocated).toEqual({ gpu: 2, cpu: 1000 });
      expect(s.fairShare.gpu).toBeGreaterThanOrEqual(2);
    }
  });

  it("keeps one sample a minute: a second in the same minute replaces it", async () => {
    await record(new Date(NOW.getTime() + 10_000));
    const r = await history(t.adminToken, { to: new Date(NOW.getTime() + 60_000).toISOString() });
    expect(r.data!.queueShareHistory.filter((s) => s.spanSeconds === 60)).toHaveLength(1);
  });

  it("gives only the samples between from and to", async () => {
    const r = await history(t.adminToken, { from: new Date(NOW.getTime() - HOUR).toISOString() });
    expect(r.data!.queueShareHistory.map((s) => s.spanSeconds)).toEqual([60]);
  });

  it("is read by every role, as fairShare is, and by nobody without a token", async () => {
    for (const role of ["VIEWER", "MEMBER", "AGENT"]) {
      const r = await history(tokens[role]!, {});
      expect(r.errors, role).toBeUndefined();
      expect(r.data!.queueShareHistory, role).toHaveLength(2);
    }
    const anonymous = await history("", {});
    expect(anonymous.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
  });

  it("refuses bad times and names unknown queues and clusters", async () => {
    const cases: [Record<string, string>, string, string][] = [
      [{ from: "yesterday" }, "BAD_USER_INPUT", "from"],
      [{ to: "2026-13-45T00:00:00Z" }, "BAD_USER_INPUT", "to"],
      [{ from: NOW.toISOString(), to: new Date(NOW.getTime() - HOUR).toISOString() }, "BAD_USER_INPUT", "to"],
      [{ queue: "nope" }, "NOT_FOUND", "queue"],
      [{ cluster: "nope" }, "NOT_FOUND", "cluster"],
    ];
    for (const [vars, code, field] of cases) {
      const r = await history(tokens.VIEWER!, vars);
      expect(r.data, JSON.stringify(vars)).toBeNull();
      expect(r.errors?.[0]?.extensions, JSON.stringify(vars)).toMatchObject({ code, field });
      expect(r.errors?.[0]?.message).toContain(vars.queue ?? vars.cluster ?? field);
    }
  });
});
