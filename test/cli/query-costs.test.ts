// Every query of our own clients fits the API's cost limit at the page sizes they ask for, on a
// fleet of 10 clusters of 2,000 nodes: the CLI's, the dashboard's and the agent's.
import { readFileSync } from "node:fs";
import { parse } from "graphql";
import { describe, expect, it } from "vitest";
import { type FleetSize, MAX_QUERY_COST, operationCost } from "../../src/api/query-cost.js";
import { buildSchema } from "../../src/api/schema.js";
import * as cli from "../../src/cli/client/queries.js";
import { MAX_BATCH_JOBS } from "../../src/store/index.js";

const schema = buildSchema();
const fleet: FleetSize = { clusters: 10, largestCluster: 2_000 };
const cost = (query: string, variables: Record<string, unknown> = {}) =>
  operationCost(schema, parse(query), null, variables, fleet);

/** The page size each paged CLI query is sent with (at most). */
const pages: Record<string, Record<string, unknown>> = {
  LIST_JOBS: { first: cli.LIST_JOBS_PAGE },
  LIST_JOBS_WITH_PODS: { first: cli.LIST_JOBS_WITH_PODS_PAGE },
  LIST_JOB_STATES: { first: 500 },
  GET_CLUSTER: { first: cli.GET_CLUSTER_NODES_PAGE },
  CLUSTER_NODES: { first: cli.GET_CLUSTER_NODES_PAGE },
  // A matrix of the most jobs one call takes.
  SUBMIT_JOBS: { inputs: Array.from({ length: MAX_BATCH_JOBS }, () => ({})) },
};

describe("our own queries fit the cost limit", () => {
  const documents = Object.entries(cli as Record<string, unknown>).filter(
    (e): e is [string, string] =>
      typeof e[1] === "string" && /^\s*(query|mutation|subscription)\b/.test(e[1]),
  );

  it.each(documents)("the CLI's %s", (name, query) => {
    expect(cost(query, pages[name] ?? {})).toBeLessThanOrEqual(MAX_QUERY_COST);
  });

  it("the dashboard's queries; a load of its main view (with its charts) or of a job's page well within one token's bucket", async () => {
    const browserModule = "../../src/dashboard/public/api.js"; // plain JS, no types
    const dashboard: Record<string, unknown> = await import(browserModule);
    const queries = Object.fromEntries(
      Object.entries(dashboard).filter(
        (e): e is [string, string] => /_QUERY$|^CANCEL_JOB$/.test(e[0]) && typeof e[1] === "string",
      ),
    );
    expect(Object.keys(queries)).toHaveLength(11);
    for (const [name, q] of Object.entries(queries))
      expect(cost(q), name).toBeLessThanOrEqual(MAX_QUERY_COST);
    const load = (names: string[]) => names.reduce((n, name) => n + cost(queries[name]!), 0);
    expect(
      load(["DASHBOARD_QUERY", "PENDING_QUERY", "SHORTFALL_QUERY", "RUNNING_QUERY"]),
    ).toBeLessThanOrEqual(MAX_QUERY_COST);
    expect(load(["ME_QUERY", "JOB_QUERY", "JOB_EVENTS_QUERY"])).toBeLessThanOrEqual(MAX_QUERY_COST / 2);
    // the main view with both charts, as on opening the dashboard
    expect(
      load([
        "DASHBOARD_QUERY",
        "PENDING_QUERY",
        "SHORTFALL_QUERY",
        "RUNNING_QUERY",
        "SHARE_HISTORY_QUERY",
        "USAGE_QUERY",
      ]),
    ).toBeLessThanOrEqual(MAX_QUERY_COST);
  });

  it("the agent's requests cost a few points each", () => {
    const source = readFileSync("src/agent/control-plane.ts", "utf8");
    const documents = [...source.matchAll(/"((?:query|mutation)\b[^"]*)"/g)].map((m) => m[1]!);
    expect(documents.length).toBeGreaterThanOrEqual(7);
    for (const d of documents) expect(cost(d)).toBeLessThan(100);
  });
});
