// The permission matrix over HTTP: every mutation × every kind of caller, allowed or refused.
// A refusal is FORBIDDEN (UNAUTHENTICATED without a valid token) and changes nothing.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gql, gqlOk, startTestApi, type TestApi } from "../helpers/api.js";
import { countRows, sql, tableRows } from "../helpers/db.js";

type Caller =
  | "anonymous"
  | "bad-token"
  | "admin"
  | "member"
  | "member-elsewhere"
  | "viewer"
  | "agent"
  | "agent-elsewhere";
const CALLERS: Caller[] = [
  "anonymous",
  "bad-token",
  "admin",
  "member",
  "member-elsewhere",
  "viewer",
  "agent",
  "agent-elsewhere",
];

let t: TestApi;
const tokens = {} as Record<Caller, string | null>;
let n = 0;
const uniq = (p: string) => `${p}-${++n}`;

const admin = (query: string, variables?: Record<string, unknown>) =>
  gqlOk<Record<string, { id: string; secret: string }>>(t.url, t.adminToken, query, variables);

async function newJob(queue: string, cluster = "c1"): Promise<string> {
  const r = await admin(`mutation($i: SubmitJobInput!) { submitJob(input: $i) { id } }`, {
    i: { name: uniq("job"), queue, cluster, tasks: [{ name: "w", replicas: 1, resources: { gpu: 1 } }] },
  });
  return r.submitJob!.id;
}

/** Each case prepares its own target, then makes the call as the given caller. */
interface Case {
  mutation: string;
  allowed: Caller[];
  /** A refusal other than FORBIDDEN (a webhook outside a MEMBER's subtrees is not found to it). */
  refusedAs?: Partial<Record<Caller, string>>;
  call: (token: string | null) => Promise<{ errors?: { extensions?: { code?: string } }[]; data?: unknown }>;
}

const as =
  (query: string, variables: Record<string, unknown> = {}) =>
  (token: string | null) =>
    gql(t.url, token, query, variables);

const cases: (() => Promise<Case>)[] = [
  async () => ({
    mutation: "createQueue",
    allowed: ["admin"],
    call: as(`mutation { createQueue(input: { name: "${uniq("q")}", parent: "org" }) { name } }`),
  }),
  async () => {
    const q = uniq("q");
    await admin(`mutation { createQueue(input: { name: "${q}" }) { name } }`);
    return {
      mutation: "updateQueue",
      allowed: ["admin"],
      call: as(`mutation { updateQueue(name: "${q}", input: { priority: 3 }) { name } }`),
    };
  },
  async () => {
    const q = uniq("q");
    await admin(`mutation { createQueue(input: { name: "${q}" }) { name } }`);
    return {
      mutation: "deleteQueue",
      allowed: ["admin"],
      call: as(`mutation { deleteQueue(name: "${q}") }`),
    };
  },
  async () => ({
    mutation: "setQueueQuota",
    allowed: ["admin"],
    call: as(
      `mutation { setQueueQuota(input: { queue: "team-a", resource: CPU, deserved: ${++n} }) { name } }`,
    ),
  }),
  async () => ({
    mutation: "registerCluster",
    allowed: ["admin"],
    call: as(`mutation { registerCluster(input: { name: "${uniq("c")}" }) { name } }`),
  }),
  async () => {
    const c = uniq("c");
    await admin(`mutation { registerCluster(input: { name: "${c}" }) { name } }`);
    return {
      mutation: "cordonCluster",
      allowed: ["admin"],
      call: as(`mutation { cordonCluster(name: "${c}", cordoned: true) { name } }`),
    };
  },
  async () => {
    const c = uniq("c");
    await admin(`mutation { registerCluster(input: { name: "${c}" }) { name } }`);
    return {
      mutation: "deleteCluster",
      allowed: ["admin"],
      call: as(`mutation { deleteCluster(name: "${c}") }`),
    };
  },
  async () => ({
    mutation: "createToken",
    allowed: ["admin"],
    call: as(`mutation { createToken(input: { name: "${uniq("t")}", role: VIEWER }) { id } }`),
  }),
  async () => {
    const { createToken } = await admin(
      `mutation { createToken(input: { name: "${uniq("t")}", role: VIEWER }) { id } }`,
    );
    return {
      mutation: "revokeToken",
      allowed: ["admin"],
      call: as(`mutation($id: ID!) { revokeToken(id: $id) }`, { id: createToken!.id }),
    };
  },
  async () => ({
    mutation: "submitJob",
    allowed: ["admin", "member"],
    call: as(`mutation($i: SubmitJobInput!) { submitJob(input: $i) { id } }`, {
      i: { name: uniq("job"), queue: "team-a", tasks: [{ name: "w", replicas: 1, resources: { cpu: 100 } }] },
    }),
  }),
  // A batch is allowed only if every queue it names is: member-elsewhere may use team-b, not team-a.
  async () => ({
    mutation: "submitJobs",
    allowed: ["admin", "member"],
    call: as(`mutation($i: [SubmitJobInput!]!) { submitJobs(inputs: $i) { id } }`, {
      i: ["team-b", "team-a"].map((queue) => ({
        name: uniq("job"),
        queue,
        tasks: [{ name: "w", replicas: 1, resources: { cpu: 100 } }],
      })),
    }),
  }),
  async () => {
    const id = await newJob("team-a");
    return {
      mutation: "cancelJob",
      allowed: ["admin", "member"],
      call: as(`mutation($id: ID!) { cancelJob(id: $id) { state } }`, { id }),
    };
  },
  async () => ({
    mutation: "reportNodes",
    allowed: ["agent"],
    call: as(`mutation($n: [NodeReport!]!) { reportNodes(cluster: "c1", nodes: $n, complete: false) }`, {
      n: [{ name: uniq("node"), capacity: { cpu: 1000, gpu: 1 } }],
    }),
  }),
  async () => {
    const id = await newJob("team-a");
    return {
      mutation: "reportPodStatus",
      allowed: ["agent"],
      call: as(`mutation($u: [PodStatusReport!]!) { reportPodStatus(cluster: "c1", updates: $u) }`, {
        u: [{ job: id, pod: "w-0", state: "FAILED", message: "oom" }],
      }),
    };
  },
  async () => {
    const id = await newJob("team-a");
    const [request] = await sql<{ id: string }>(
      t.db.url,
      `INSERT INTO bind_request (id, kind, cluster_name, job_id, pod_id, node_name, generation)
       SELECT $1, 'BIND', 'c1', job_id, id, 'n1', 1 FROM pod WHERE job_id = $2 ORDER BY name LIMIT 1
       RETURNING id::text`,
      [randomUUID(), id],
    );
    return {
      mutation: "reportBindResult",
      allowed: ["agent"],
      call: as(`mutation($r: [BindResultReport!]!) { reportBindResult(cluster: "c1", results: $r) }`, {
        r: [{ bindRequest: request!.id, ok: false, message: "node gone" }],
      }),
    };
  },
  async () => ({
    mutation: "reportPodGroups",
    allowed: ["admin", "agent"],
    call: as(`mutation($g: [PodGroupReport!]!) { reportPodGroups(cluster: "c1", groups: $g) }`, {
      g: [
        {
          namespace: "ml",
          name: uniq("group"),
          queue: "team-a",
          pods: [{ name: "p-0", resources: { cpu: 1000 } }],
        },
      ],
    }),
  }),
  async () => ({
    mutation: "reportPodInventory",
    allowed: ["agent"],
    call: as(`mutation($p: [PodRef!]!) { reportPodInventory(cluster: "c1", pods: $p) }`, { p: [] }),
  }),
  async () => ({
    mutation: "createWebhook",
    allowed: ["admin", "member"],
    call: as(`mutation($i: WebhookInput!) { createWebhook(input: $i) { id } }`, {
      i: { url: "http://192.0.2.10/hook", events: ["JOB_FAILED"], queues: ["team-a"] },
    }),
  }),
  async () => ({
    mutation: "deleteWebhook",
    allowed: ["admin", "member"],
    refusedAs: { "member-elsewhere": "NOT_FOUND" },
    call: as("mutation($id: ID!) { deleteWebhook(id: $id) }", { id: await newWebhook() }),
  }),
  async () => ({
    mutation: "enableWebhook",
    allowed: ["admin", "member"],
    refusedAs: { "member-elsewhere": "NOT_FOUND" },
    call: as("mutation($id: ID!) { enableWebhook(id: $id) { id } }", { id: await newWebhook() }),
  }),
];

/** A webhook on team-a's jobs (an ADMIN's). */
async function newWebhook(): Promise<string> {
  const r = await admin(`mutation($i: WebhookInput!) { createWebhook(input: $i) { id } }`, {
    i: { url: "http://192.0.2.10/hook", events: ["JOB_FAILED"], queues: ["team-a"] },
  });
  return r.createWebhook!.id;
}

async function dbState() {
  const url = t.db.url;
  return Promise.all([
    countRows(url, "event"),
    countRows(url, "queue"),
    ...["queue_quota", "cluster", "api_token", "job", "pod"].map((table) => tableRows(url, table)),
    countRows(url, "node"),
    tableRows(url, "bind_request"),
    tableRows(url, "webhook"),
  ]);
}

beforeAll(async () => {
  t = await startTestApi();
  await admin(`mutation { createQueue(input: { name: "org" }) { name } }`);
  await admin(`mutation { createQueue(input: { name: "team-a", parent: "org" }) { name } }`);
  await admin(`mutation { createQueue(input: { name: "team-b", parent: "org" }) { name } }`);
  await admin(`mutation { registerCluster(input: { name: "c1" }) { name } }`);
  await admin(`mutation { registerCluster(input: { name: "c2" }) { name } }`);
  const make = async (input: Record<string, unknown>) =>
    (
      await admin("mutation($i: CreateTokenInput!) { createToken(input: $i) { secret } }", {
        i: { name: uniq("tok"), ...input },
      })
    ).createToken!.secret;
  tokens.anonymous = null;
  tokens["bad-token"] = "fq_not-a-real-token";
  tokens.admin = t.adminToken;
  tokens.member = await make({ role: "MEMBER", queues: ["org"] });
  tokens["member-elsewhere"] = await make({ role: "MEMBER", queues: ["team-b"] });
  tokens.viewer = await make({ role: "VIEWER" });
  tokens.agent = await make({ role: "AGENT", cluster: "c1" });
  tokens["agent-elsewhere"] = await make({ role: "AGENT", cluster: "c2" });
});
afterAll(async () => t?.close());

const MUTATIONS = [
  "createQueue",
  "updateQueue",
  "deleteQueue",
  "setQueueQuota",
  "registerCluster",
  "cordonCluster",
  "deleteCluster",
  "createToken",
  "revokeToken",
  "submitJob",
  "submitJobs",
  "cancelJob",
  "reportNodes",
  "reportPodStatus",
  "reportBindResult",
  "reportPodGroups",
  "reportPodInventory",
  "createWebhook",
  "deleteWebhook",
  "enableWebhook",
];

describe.each(cases.map((c, i) => [MUTATIONS[i]!, c] as const))("%s", (name, prepare) => {
  it.each(CALLERS)("as %s", async (caller) => {
    const c = await prepare();
    expect(c.mutation).toBe(name);
    const before = await dbState();
    const r = await c.call(tokens[caller]);
    if (c.allowed.includes(caller)) {
      expect(r.errors, `${c.mutation} as ${caller}`).toBeUndefined();
      expect(r.data).toBeTruthy();
    } else {
      const expected =
        caller === "anonymous" || caller === "bad-token"
          ? "UNAUTHENTICATED"
          : (c.refusedAs?.[caller] ?? "FORBIDDEN");
      expect(
        r.errors?.map((e) => e.extensions?.code),
        `${c.mutation} as ${caller}`,
      ).toEqual([expected]);
      expect(await dbState()).toEqual(before);
    }
  });
});

describe("queries", () => {
  const reads = [
    "{ me { name } }",
    "{ clusters { name } }",
    `{ cluster(name: "c1") { name } }`,
    "{ queues { name } }",
    `{ queue(name: "org") { name } }`,
    "{ jobs { edges { cursor } } }",
    `{ fairShare { queue } }`,
    `{ queueShareHistory(queue: "org", cluster: "c1", from: "2026-01-01T00:00:00Z", to: "2030-01-01T00:00:00Z") { at } }`,
  ];
  it.each(CALLERS)("every token may read; no token may not (%s)", async (caller) => {
    for (const q of reads) {
      const r = await gql(t.url, tokens[caller], q);
      if (caller === "anonymous" || caller === "bad-token")
        expect(r.errors?.[0]?.extensions?.code, q).toBe("UNAUTHENTICATED");
      else expect(r.errors, q).toBeUndefined();
    }
  });

  it.each(CALLERS)("tokens: ADMIN only; bindRequests: ADMIN or the cluster's AGENT (%s)", async (caller) => {
    const list = await gql(t.url, tokens[caller], "{ tokens { id } }");
    const outbox = await gql(t.url, tokens[caller], `{ bindRequests(cluster: "c1") { id } }`);
    const denied = caller === "anonymous" || caller === "bad-token" ? "UNAUTHENTICATED" : "FORBIDDEN";
    expect(list.errors?.[0]?.extensions?.code).toBe(caller === "admin" ? undefined : denied);
    expect(outbox.errors?.[0]?.extensions?.code).toBe(
      caller === "admin" || caller === "agent" ? undefined : denied,
    );
  });

  it.each(
    CALLERS,
  )("webhooks and their deliveries: ADMIN, or a MEMBER of the webhook's queues (%s)", async (caller) => {
    const id = await newWebhook();
    const list = await gql(t.url, tokens[caller], "{ webhooks { id } }");
    const log = await gql(t.url, tokens[caller], "query($w: ID!) { webhookDeliveries(webhook: $w) { id } }", {
      w: id,
    });
    const denied = caller === "anonymous" || caller === "bad-token" ? "UNAUTHENTICATED" : "FORBIDDEN";
    if (caller === "admin" || caller === "member") {
      expect((list.data as { webhooks: { id: string }[] }).webhooks.map((w) => w.id)).toContain(id);
      expect(log.data).toEqual({ webhookDeliveries: [] });
    } else if (caller === "member-elsewhere") {
      expect((list.data as { webhooks: { id: string }[] }).webhooks.map((w) => w.id)).not.toContain(id);
      expect(log.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
    } else {
      expect(list.errors?.[0]?.extensions?.code).toBe(denied);
      expect(log.errors?.[0]?.extensions?.code).toBe(denied);
    }
  });

  it.each(CALLERS)("jobTemplates: ADMIN or the AGENT of the job's cluster (%s)", async (caller) => {
    const id = await newJob("team-a");
    const r = await gql(t.url, tokens[caller], "query($j: ID!) { jobTemplates(job: $j) { task template } }", {
      j: id,
    });
    const denied = caller === "anonymous" || caller === "bad-token" ? "UNAUTHENTICATED" : "FORBIDDEN";
    if (caller === "admin" || caller === "agent")
      expect(r.data).toEqual({ jobTemplates: [{ task: "w", template: null }] });
    else expect(r.errors?.[0]?.extensions?.code).toBe(denied);
  });

  it("a MEMBER may submit below its queue but not elsewhere, and learns why", async () => {
    const r = await gql(
      t.url,
      tokens["member-elsewhere"],
      `mutation($i: SubmitJobInput!) { submitJob(input: $i) { id } }`,
      {
        i: { name: "x", queue: "team-a", tasks: [{ name: "w", replicas: 1, resources: { cpu: 100 } }] },
      },
    );
    expect(r.errors?.[0]?.message).toMatch(/may use queues team-b and below, not team-a/);
  });
});
