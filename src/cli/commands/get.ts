// `fleetq get jobs|job ID|queues|clusters`: aligned tables (or --output json).
import type { Command } from "commander";
import {
  CLUSTER_NODES,
  GET_CLUSTER,
  GET_CLUSTER_NODES_PAGE,
  GET_JOB,
  LIST_CLUSTERS,
  LIST_JOBS,
  LIST_JOBS_PAGE,
  LIST_JOBS_WITH_PODS,
  LIST_JOBS_WITH_PODS_PAGE,
  LIST_QUEUES,
} from "../client/queries.js";
import type {
  ClusterDetail,
  ClusterView,
  JobDetail,
  JobState,
  JobSummary,
  NodeView,
  QueueView,
} from "../client/types.js";
import { clusterDetailView } from "../output/cluster-views.js";
import { action, apiClientOf, outputFormat, print, printJson } from "../command-context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { parseLabelSelectors } from "../label-selector.js";
import { formatAge, formatResource } from "../output/format.js";
import { jobDetailView, jobsTable } from "../output/job-views.js";
import { queuesTable } from "../output/queue-views.js";
import { renderTable } from "../output/table.js";

const JOB_STATES: readonly JobState[] = [
  "PENDING",
  "ADMITTED",
  "RUNNING",
  "SUCCEEDED",
  "FAILED",
  "CANCELLED",
];

function positiveInt(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new CliError(`${flag}: "${value}" is not a positive whole number`);
  return n;
}

export function registerGet(program: Command): void {
  const get = program.command("get").description("show jobs, a job, queues or clusters");

  get
    .command("jobs")
    .description("jobs, newest first")
    .option("-q, --queue <queue>", "only this queue and the queues below it")
    .option("-s, --state <state>", `only this state (${JOB_STATES.join(", ")})`)
    .option("-c, --cluster <cluster>", "only jobs on this cluster")
    .option(
      "-l, --selector <key=value,...>",
      "only jobs with these labels (all of them; repeatable)",
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option("-n, --limit <n>", "at most this many", "50")
    .action(
      action(
        async (
          opts: { queue?: string; state?: string; cluster?: string; selector?: string[]; limit: string },
          cmd: Command,
        ) => {
          const state = opts.state?.toUpperCase();
          if (state && !JOB_STATES.includes(state as JobState)) {
            throw new CliError(`--state: "${opts.state}" is not one of ${JOB_STATES.join(", ")}`);
          }
          const limit = positiveInt(opts.limit, "--limit");
          const client = apiClientOf(cmd);
          const labels = parseLabelSelectors(opts.selector, "--selector");
          const filter = {
            queue: opts.queue,
            state,
            cluster: opts.cluster,
            labels: labels.length ? labels : undefined,
          };
          // The table counts pods by state; the JSON has each job's first 100 pods too, in
          // smaller pages (the API's cost limit weighs pod rows).
          const json = outputFormat(cmd) === "json";
          const [query, pageSize] = json
            ? [LIST_JOBS_WITH_PODS, LIST_JOBS_WITH_PODS_PAGE]
            : [LIST_JOBS, LIST_JOBS_PAGE];
          const jobs: JobSummary[] = [];
          let after: string | null = null;
          while (jobs.length < limit) {
            const page: {
              jobs: {
                edges: { node: JobSummary }[];
                pageInfo: { hasNextPage: boolean; endCursor: string | null };
              };
            } = await client.request(query, {
              filter,
              first: Math.min(pageSize, limit - jobs.length),
              after,
            });
            jobs.push(...page.jobs.edges.map((e) => e.node));
            if (!page.jobs.pageInfo.hasNextPage) break;
            after = page.jobs.pageInfo.endCursor;
          }
          if (json) return printJson(jobs);
          print(jobs.length ? jobsTable(jobs) : "No jobs.");
        },
      ),
    );

  get
    .command("job")
    .description("one job: its pods, pending reason and events")
    .argument("<id>", "the job id")
    .action(
      action(async (id: string, _opts: unknown, cmd: Command) => {
        const { job } = await apiClientOf(cmd).request<{ job: JobDetail | null }>(GET_JOB, { id });
        if (!job) throw new CliError(`job ${id} not found`, EXIT.REJECTED);
        if (outputFormat(cmd) === "json") return printJson(job);
        print(jobDetailView(job));
      }),
    );

  get
    .command("queues")
    .description("the queue tree with its quotas (deserved/limit per resource; -1 or ∞ = unlimited)")
    .action(
      action(async (_opts: unknown, cmd: Command) => {
        const { queues } = await apiClientOf(cmd).request<{ queues: QueueView[] }>(LIST_QUEUES);
        if (outputFormat(cmd) === "json") return printJson(queues);
        print(queues.length ? queuesTable(queues) : "No queues.");
      }),
    );

  get
    .command("cluster")
    .description("one cluster and its nodes; exit code 3 if it is unknown")
    .argument("<name>", "the cluster")
    .action(
      action(async (name: string, _opts: unknown, cmd: Command) => {
        const client = apiClientOf(cmd);
        const first = GET_CLUSTER_NODES_PAGE;
        const { cluster } = await client.request<{ cluster: ClusterDetail | null }>(GET_CLUSTER, {
          name,
          first,
        });
        if (!cluster) throw new CliError(`cluster ${name} not found`);
        // The rest of its nodes a page at a time (the API's cost limit weighs node rows).
        for (let page = cluster.nodes; page.length === first; ) {
          const next = await client.request<{ cluster: { nodes: NodeView[] } | null }>(CLUSTER_NODES, {
            name,
            first,
            after: page.at(-1)!.name,
          });
          page = next.cluster?.nodes ?? [];
          cluster.nodes.push(...page);
        }
        if (outputFormat(cmd) === "json") return printJson(cluster);
        print(clusterDetailView(cluster));
      }),
    );

  get
    .command("clusters")
    .description("clusters with their capacity and what is allocated")
    .action(
      action(async (_opts: unknown, cmd: Command) => {
        const { clusters } = await apiClientOf(cmd).request<{ clusters: ClusterView[] }>(LIST_CLUSTERS);
        if (outputFormat(cmd) === "json") return printJson(clusters);
        const used = (c: ClusterView, key: "gpu" | "cpu" | "memory") =>
          `${formatResource(c.allocated, key)}/${formatResource(c.capacity, key)}`;
        print(
          clusters.length
            ? renderTable(
                [
                  { header: "CLUSTER", value: (c: ClusterView) => c.name },
                  { header: "STATE", value: (c) => (c.cordoned ? `${c.state},CORDONED` : c.state) },
                  { header: "NODES", value: (c) => String(c.nodeCount), align: "right" },
                  { header: "GPU", value: (c) => used(c, "gpu"), align: "right" },
                  { header: "CPU", value: (c) => used(c, "cpu"), align: "right" },
                  { header: "MEMORY", value: (c) => used(c, "memory"), align: "right" },
                  {
                    header: "HEARTBEAT",
                    value: (c) => (c.heartbeatAt ? `${formatAge(c.heartbeatAt)} ago` : "-"),
                  },
                  { header: "OWNER", value: (c) => c.owner?.worker ?? "-" },
                  { header: "LABELS", value: (c) => c.labels.map((l) => `${l.key}=${l.value}`).join(",") },
                ],
                clusters,
              )
            : "No clusters.",
        );
      }),
    );
}
