// Usage reports, prices and Job.usage over HTTP: two hours of known usage (three jobs on two
// clusters) sampled and rolled up by the store's operations as the workers run them, then asked
// for by each role, grouped every way, priced, and with bad input.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createStore,
  openDatabase,
  recordUsageSamples,
  rollUpUsage,
  type Database,
} from "../../src/store/index.js";
import {
  gql,
  gqlOk,
  registerClusterWithAgent,
  reportNodes,
  startTestApi,
  type TestApi,
} from "../helpers/api.js";
import { sql } from "../helpers/db.js";

let t: TestApi;
let db: Database;
const tokens: Record<string, string> = {};
const jobs: Record<string, string> = {};
const START = Date.parse("2026-11-01T00:00:00Z");

const admin = <T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>) =>
  gqlOk<T>(t.url, t.adminToken, query, variables);

interface Row {
  queue: string | null;
  cluster: string | null;
  gpuModel: string | null;
  label: string | null;
  periodStart: string;
  periodEnd: string;
  allocated: { gpuHours: number; cpuCoreHours: number; memoryGiBHours: number };
  used: { gpuHours: number };
  cost: number | null;
}
const REPORT = `query($from: String!, $to: String!, $by: [UsageGroup!]!, $key: String, $step: UsageStep) {
  usageReport(from: $from, to: $to, groupBy: $by, labelKey: $key, step: $step) {
    queue cluster gpuModel label periodStart periodEnd
    allocated { gpuHours cpuCoreHours memoryGiBHours } used { gpuHours } cost } }`;
const DAY = { from: "2026-11-01", to: "2026-11-02" };
const report = (token: string, vars: Record<string, unknown>) =>
  gql<{ usageReport: Row[] }>(t.url, token, REPORT, { ...DAY, ...vars });
const rows = async (token: string, vars: Record<string, unknown>) => {
  const r = await report(token, vars);
  expect(r.errors).toBeUndefined();
  return r.data!.usageReport;
};
const gpu = (rs: Row[]) => rs.map((r) => [r.queue, r.cluster, r.label, r.allocated.gpuHours]);

async function token(name: string, role: string, queues?: string[]) {
  const r = await admin<{ createToken: { secret: string } }>(
    "mutation($i: CreateTokenInput!) { createToken(input: $i) { secret } }",
    { i: { name, role, queues } },
  );
  tokens[name] = r.createToken.secret;
}

async function submit(
  name: string,
  queue: string,
  cluster: string,
  gpus: number,
  cpu: number,
  team?: string,
) {
  const r = await admin<{ submitJob: { id: string } }>(
    "mutation($i: SubmitJobInput!) { submitJob(input: $i) { id } }",
    {
      i: {
        name,
        queue,
        cluster,
        labels: team ? [{ key: "team", value: team }] : [],
        tasks: [{ name: "w", replicas: 1, resources: { gpu: gpus, cpu, memory: "1Gi" } }],
      },
    },
  );
  jobs[name] = r.submitJob.id;
}

beforeAll(async () => {
  t = await startTestApi();
  db = await openDatabase(t.db.url);
  for (const [name, parent] of [
    ["org", null],
    ["team-a", "org"],
    ["team-b", "org"],
  ])
    await admin(
      "mutation($n: String!, $p: String) { createQueue(input: { name: $n, parent: $p }) { name } }",
      { n: name, p: parent },
    );
  for (const c of ["c1", "c2"]) {
    const agent = await registerClusterWithAgent(t, c);
    await reportNodes(t, agent, c, [
      { name: "n1", gpuModel: "A100", capacity: { gpu: 8, cpu: 64000, memory: "512Gi" } },
    ]);
  }
  await submit("vision", "team-a", "c1", 2, 1000, "vision");
  await submit("nlp", "team-b", "c1", 1, 1000, "nlp");
  await submit("etl", "team-a", "c2", 0, 4000);
  // The pods run on n1 from 00:00 to 02:00.
  await sql(t.db.url, "UPDATE pod SET state = 'RUNNING', node_name = 'n1'");
  const store = createStore(db);
  for (let at = START + 60_000; at <= START + 2 * 3_600_000; at += at === START + 60_000 ? 240_000 : 300_000)
    for (const cluster of ["c1", "c2"])
      await recordUsageSamples(store, { cluster, at: new Date(at), seconds: 60, maxSeconds: 300 });
  for (const cluster of ["c1", "c2"])
    await rollUpUsage(store, cluster, { now: new Date(START + 2 * 3_600_000) });
  await token("member-a", "MEMBER", ["team-a"]);
  await token("member-org", "MEMBER", ["org"]);
  await token("viewer", "VIEWER");
  tokens.agent = await registerClusterWithAgent(t, "c3");
});
afterAll(async () => {
  await db?.close();
  await t?.close();
});

describe("usageReport", () => {
  it("groups by queue and cluster, and by hour", async () => {
    const byQueue = await rows(t.adminToken, { by: ["QUEUE", "CLUSTER"] });
    expect(gpu(byQueue)).toEqual([
      ["team-a", "c1", null, 4],
      ["team-a", "c2", null, 0],
      ["team-b", "c1", null, 2],
    ]);
    const etl = byQueue[1]!;
    expect(etl.allocated).toEqual({ gpuHours: 0, cpuCoreHours: 8, memoryGiBHours: 2 });
    expect(byQueue[0]!.used.gpuHours).toBe(4);
    expect([etl.periodStart, etl.periodEnd]).toEqual([
      "2026-11-01T00:00:00.000Z",
      "2026-11-02T00:00:00.000Z",
    ]);
    const hourly = await rows(t.adminToken, { by: ["CLUSTER"], step: "HOUR" });
    expect(hourly.map((r) => [r.periodStart, r.cluster, r.allocated.gpuHours])).toEqual([
      ["2026-11-01T00:00:00.000Z", "c1", 3],
      ["2026-11-01T00:00:00.000Z", "c2", 0],
      ["2026-11-01T01:00:00.000Z", "c1", 3],
      ["2026-11-01T01:00:00.000Z", "c2", 0],
    ]);
    const month = await rows(t.adminToken, {
      from: "2026-10-31T22:00:00Z",
      to: "2026-12-01",
      by: ["GPU_MODEL"],
      step: "MONTH",
    });
    expect(month.map((r) => [r.periodStart, r.periodEnd, r.gpuModel, r.allocated.gpuHours])).toEqual([
      ["2026-11-01T00:00:00.000Z", "2026-12-01T00:00:00.000Z", "", 0],
      ["2026-11-01T00:00:00.000Z", "2026-12-01T00:00:00.000Z", "A100", 6],
    ]);
  });

  it("groups by a label's value", async () => {
    const r = await rows(t.adminToken, { by: ["LABEL"], key: "team" });
    expect(gpu(r)).toEqual([
      [null, null, "nlp", 2],
      [null, null, "vision", 4],
      [null, null, null, 0],
    ]);
  });

  it("shows a MEMBER their subtrees, a VIEWER fleet totals, an AGENT nothing", async () => {
    expect(gpu(await rows(tokens["member-a"]!, { by: ["QUEUE"] }))).toEqual([["team-a", null, null, 4]]);
    expect(gpu(await rows(tokens["member-a"]!, { by: [] }))).toEqual([[null, null, null, 4]]);
    expect(gpu(await rows(tokens["member-org"]!, { by: ["QUEUE"] })).map((x) => x[0])).toEqual([
      "team-a",
      "team-b",
    ]);
    expect(gpu(await rows(tokens.viewer!, { by: ["CLUSTER"] }))).toEqual([
      [null, "c1", null, 6],
      [null, "c2", null, 0],
    ]);
    for (const by of [["QUEUE"], ["LABEL"]]) {
      const r = await report(tokens.viewer!, { by, key: by[0] === "LABEL" ? "team" : null });
      expect(r.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    }
    expect((await report(tokens.agent!, { by: [] })).errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
  });

  it("refuses bad input naming the argument", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ from: "2026-11-02", to: "2026-11-01", by: [] }, "to"],
      [{ from: "2026-13-01", by: [] }, "from"],
      [{ from: "yesterday", by: [] }, "from"],
      [{ to: "2026-11-01T10:30:00Z", by: [] }, "to"],
      [{ to: "2026-12-15", by: [], step: "HOUR" }, "to"],
      [{ by: ["LABEL"] }, "labelKey"],
      [{ by: ["LABEL"], key: "bad key!" }, "labelKey"],
      [{ by: ["QUEUE"], key: "team" }, "labelKey"],
      [{ by: ["QUEUE", "QUEUE"] }, "groupBy"],
    ];
    for (const [vars, field] of cases) {
      const r = await report(t.adminToken, vars);
      expect(r.errors?.[0]?.extensions, JSON.stringify(vars)).toMatchObject({
        code: "BAD_USER_INPUT",
        field,
      });
    }
  });
});

describe("prices and cost", () => {
  const SET = `mutation($i: SetPriceInput!) { setPrice(input: $i) { cluster gpuModel resource price } }`;

  it("are set by an ADMIN only, and refused when bad", async () => {
    for (const who of ["member-org", "viewer"]) {
      const r = await gql(t.url, tokens[who]!, SET, { i: { resource: "GPU", price: 1 } });
      expect(r.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    }
    expect(await rows(t.adminToken, { by: [] })).toMatchObject([{ cost: null }]);
    for (const [i, field] of [
      [{ resource: "GPU", price: -1 }, "input.price"],
      [{ resource: "GPU", price: 1, cluster: "nowhere" }, "input.cluster"],
      [{ resource: "GPU", price: 1, gpuModel: "" }, "input.gpuModel"],
    ] as const) {
      const r = await gql(t.url, t.adminToken, SET, { i });
      expect(r.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field });
    }
    const prices = await gqlOk<{ prices: unknown[] }>(t.url, tokens.viewer!, "{ prices { price } }");
    expect(prices.prices).toEqual([]);
  });

  it("charge allocated hours at the most specific price", async () => {
    await admin(SET, { i: { resource: "GPU", price: 2.5 } });
    await admin(SET, { i: { resource: "GPU", price: 3, cluster: "c1", gpuModel: "A100" } });
    await admin(SET, { i: { resource: "CPU", price: 0.1 } });
    const r = await rows(t.adminToken, { by: ["QUEUE", "CLUSTER"] });
    expect(r.map((x) => x.cost)).toEqual([12.2, 0.8, 6.2].map((c) => expect.closeTo(c, 9)));
    await admin(SET, { i: { resource: "GPU", price: null, cluster: "c1", gpuModel: "A100" } });
    expect((await rows(t.adminToken, { by: ["QUEUE", "CLUSTER"] }))[0]!.cost).toBeCloseTo(10.2, 9);
    const prices = await gqlOk<{ prices: unknown[] }>(
      t.url,
      tokens.viewer!,
      "{ prices { cluster gpuModel resource price } }",
    );
    expect(prices.prices).toEqual([
      { cluster: null, gpuModel: null, resource: "GPU", price: 2.5 },
      { cluster: null, gpuModel: null, resource: "CPU", price: 0.1 },
    ]);
  });
});

describe("Job.usage", () => {
  it("is the job's own resource-hours", async () => {
    const r = await gqlOk<{
      job: { usage: { allocated: { gpuHours: number }; used: { gpuHours: number } } };
    }>(
      t.url,
      tokens.viewer!,
      "query($id: ID!) { job(id: $id) { usage { allocated { gpuHours } used { gpuHours } } } }",
      { id: jobs.vision },
    );
    expect(r.job.usage).toEqual({ allocated: { gpuHours: 4 }, used: { gpuHours: 4 } });
  });
});
