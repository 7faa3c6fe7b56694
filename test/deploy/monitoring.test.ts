// deploy/grafana and deploy/kubernetes/monitoring against what fleetq serves: a control plane (the
// API server in this process, `fleetq worker` as a process of its own, a simulated agent) runs a
// job to its end, /metrics of the API and of the worker are scraped over HTTP, and every metric a
// dashboard panel, a dashboard variable or an alerting rule names must be among them. The values
// of the job's metrics are checked on the way.
import type { ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../agent/until.js";
import { ControlPlane, gpuJob } from "../workers/harness.js";
import {
  dashboardExpressions,
  type Expression,
  metricNames,
  ruleExpressions,
  servedSeries,
  unserved,
} from "./promql-names.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const GRAFANA = path.join(ROOT, "deploy/grafana");
const RULES = "deploy/kubernetes/monitoring/prometheusrule.yaml";

// The API's transition metrics are this process's: names of this file's own keep other files'
// samples (test files share processes) out of the counts.
const suffix = Math.random().toString(36).slice(2, 8);
const CLUSTER = `mon-${suffix}`;
const QUEUE = `mon-q-${suffix}`;
const CLUSTER_YAML = `
defaultPodDurationSeconds: 2
nodeGroups:
  - { name: gpu, count: 2, cpu: 32, memory: 256Gi, gpus: 8, gpuModel: A100, gpuMemoryMiB: 81920 }
`;

function dashboards(): Expression[] {
  return readdirSync(GRAFANA)
    .filter((f) => f.endsWith(".json"))
    .flatMap((f) =>
      dashboardExpressions(`deploy/grafana/${f}`, JSON.parse(readFileSync(path.join(GRAFANA, f), "utf8"))),
    );
}

const rules = (): Expression[] => ruleExpressions(RULES, readFileSync(path.join(ROOT, RULES), "utf8"));

/** A sample's value from an exposition, by name and exact labels; undefined when absent. */
function sample(exposition: string, name: string, labels: Record<string, string>): number | undefined {
  const want = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .sort()
    .join(",");
  for (const m of exposition.matchAll(/^(\w+)(?:\{(.*)\})? (\S+)$/gm)) {
    if (m[1] !== name) continue;
    const got = (m[2] ?? "").split(",").filter(Boolean).sort().join(",");
    if (got === want) return Number(m[3]);
  }
  return undefined;
}

describe("the dashboards and alerting rules", () => {
  let cp: ControlPlane;
  let worker: ChildProcess;
  let workerPort = 0;
  let api = "";
  let wrk = "";

  beforeAll(async () => {
    cp = await ControlPlane.start();
    await cp.createQueue(QUEUE);
    await cp.setQuota(QUEUE, "GPU", 16);
    await cp.addCluster(CLUSTER, CLUSTER_YAML);
    worker = await cp.spawnWorker(`mon-worker-${suffix}`, {}, (line) => {
      if (line.includes('"msg":"workers running"')) workerPort = JSON.parse(line).metricsPort;
    });
    const job = gpuJob("scraped", QUEUE, 2, 1, { cluster: CLUSTER });
    job.tasks[0]!.durationSeconds = 2;
    const id = await cp.submit(job);
    // Through RUNNING to SUCCEEDED (its pods run 2 s): both transitions recorded.
    await cp.jobInState(id, "SUCCEEDED", 120_000);
    const base = cp.api.url.replace(/\/graphql$/, "");
    const scrape = async (url: string, headers: Record<string, string> = {}) => {
      const r = await fetch(url, { headers });
      expect(r.status, url).toBe(200);
      return r.text();
    };
    api = await scrape(`${base}/metrics`, { authorization: `Bearer ${cp.api.adminToken}` });
    // The worker's cycles and admission passes have run by now; wait for its scrape to show them.
    wrk = await until(async () => {
      const text = await scrape(`http://127.0.0.1:${workerPort}/metrics`);
      expect(
        sample(text, "fleetq_cycle_phase_seconds_count", { cluster: CLUSTER, phase: "commit" }),
      ).toBeGreaterThan(0);
      return text;
    });
  }, 240_000);
  afterAll(async () => {
    worker?.kill("SIGTERM");
    await cp?.close();
  });

  it("name only metrics the API and the worker serve", () => {
    const served = new Set([...servedSeries(api), ...servedSeries(wrk)]);
    const expressions = [...dashboards(), ...rules()];
    expect(expressions.length).toBeGreaterThan(40);
    expect(unserved(expressions, served)).toEqual([]);
    // Each dashboard has its data source as a variable that every query uses.
    for (const f of readdirSync(GRAFANA).filter((n) => n.endsWith(".json"))) {
      const d = JSON.parse(readFileSync(path.join(GRAFANA, f), "utf8"));
      expect(
        d.templating.list.find((v: { type: string }) => v.type === "datasource"),
        f,
      ).toBeDefined();
      expect(JSON.stringify(d.panels).match(/"uid":"(?!\$\{datasource\})/g), f).toBeNull();
    }
  });

  it("find a metric no process serves", () => {
    const served = new Set([...servedSeries(api), ...servedSeries(wrk)]);
    const dashboard = {
      panels: [
        {
          title: "typo",
          targets: [{ expr: 'sum(rate(fleetq_jobs_finsihed_total{queue=~"$queue"}[$__rate_interval]))' }],
        },
      ],
    };
    expect(unserved(dashboardExpressions("bad.json", dashboard), served)).toEqual([
      'fleetq_jobs_finsihed_total (bad.json: panel "typo")',
    ]);
    // A histogram is asked for by its series, never by its family's name.
    expect(unserved([{ where: "r", expr: "rate(fleetq_job_wait_seconds[5m])" }], served)).toEqual([
      "fleetq_job_wait_seconds (r)",
    ]);
  });

  it("read the names out of PromQL", () => {
    expect(
      metricNames(
        'histogram_quantile(0.9, sum by (le, phase) (rate(a_bucket{cluster=~"x", phase!="load"}[5m]))) / ignoring(phase) group_left b unless on () c offset 1h > bool 2e3',
      ).sort(),
    ).toEqual(["a_bucket", "b", "c"]);
    expect(() => metricNames("sum(rate(a[5m])")).toThrow(/unclosed/);
    expect(() => metricNames("histogram_quantle(0.9, a)")).toThrow(/unknown function histogram_quantle/);
  });

  it("the job's wait and end, its binds, the cycle's phases and the clusters are counted", () => {
    // The agent's reports reach the API: the job's first RUNNING and its end were committed there.
    expect(sample(api, "fleetq_job_wait_seconds_count", { queue: QUEUE, cluster: CLUSTER })).toBe(1);
    expect(
      sample(api, "fleetq_job_wait_seconds_bucket", { queue: QUEUE, cluster: CLUSTER, le: "+Inf" }),
    ).toBe(1);
    expect(
      sample(api, "fleetq_jobs_finished_total", { queue: QUEUE, cluster: CLUSTER, outcome: "succeeded" }),
    ).toBe(1);
    expect(
      sample(api, "fleetq_jobs_finished_total", { queue: QUEUE, cluster: CLUSTER, outcome: "failed" }),
    ).toBeUndefined();
    expect(sample(api, "fleetq_bind_latency_seconds_count", { cluster: CLUSTER })).toBe(2);
    // Nothing of it was committed by the worker.
    expect(sample(wrk, "fleetq_job_wait_seconds_count", { queue: QUEUE, cluster: CLUSTER })).toBeUndefined();
    for (const phase of ["load", "session", "commit", "dispatch"]) {
      expect(
        sample(wrk, "fleetq_cycle_phase_seconds_count", { cluster: CLUSTER, phase }),
        phase,
      ).toBeGreaterThan(0);
    }
    expect(sample(wrk, "fleetq_admission_pass_seconds_count", {})).toBeGreaterThan(0);
    expect(sample(api, "fleetq_cluster_capacity", { cluster: CLUSTER, resource: "gpu" })).toBe(16);
    expect(sample(api, "fleetq_cluster_capacity", { cluster: CLUSTER, resource: "cpu" })).toBe(64);
    expect(sample(api, "fleetq_cluster_allocated", { cluster: CLUSTER, resource: "gpu" })).toBe(0);
    expect(sample(api, "fleetq_cluster_state", { cluster: CLUSTER, state: "READY" })).toBe(1);
    expect(sample(api, "fleetq_outbox_backlog", { cluster: CLUSTER, state: "PENDING" })).toBeUndefined();
  });
});
