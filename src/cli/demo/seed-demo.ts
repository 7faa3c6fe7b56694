// Creates the demo deployment through the API with an ADMIN token, once: queues that exist are
// left alone (and so are their quotas: restarts never undo an admin's changes), clusters are
// registered if missing, and a token is made only when its saved secret no longer works.
import { ApiClient, ApiError } from "../client/api-client.js";
import {
  CREATE_QUEUE,
  CREATE_TOKEN,
  LIST_CLUSTERS,
  LIST_QUEUES,
  ME,
  REGISTER_CLUSTER,
  SET_QUOTA,
} from "../client/queries.js";
import { DEMO_MEMBERS, DEMO_QUEUES, DEMO_QUOTAS } from "./demo-plan.js";
import type { TokenFiles } from "./token-files.js";

export interface DemoCluster {
  name: string;
  labels: Record<string, string>;
}

export interface DemoTokens {
  /** MEMBER tokens by name */
  members: Record<string, string>;
  /** AGENT tokens by cluster */
  agents: Record<string, string>;
  /** A VIEWER token: the dashboard link's */
  viewer: string;
}

export interface SeedResult {
  createdQueues: string[];
  registeredClusters: string[];
  createdTokens: string[];
  tokens: DemoTokens;
}

export const agentTokenName = (cluster: string) => `agent-${cluster}`;
export const DEMO_VIEWER = "demo-viewer";

export async function seedDemo(
  admin: ApiClient,
  clusters: readonly DemoCluster[],
  files: TokenFiles,
): Promise<SeedResult> {
  const result: SeedResult = {
    createdQueues: [],
    registeredClusters: [],
    createdTokens: [],
    tokens: { members: {}, agents: {}, viewer: "" },
  };

  // Clusters first: quota overrides name them.
  const { clusters: registered } = await admin.request<{ clusters: { name: string }[] }>(LIST_CLUSTERS);
  const known = new Set(registered.map((c) => c.name));
  for (const c of clusters) {
    if (known.has(c.name)) continue;
    const labels = Object.entries(c.labels).map(([key, value]) => ({ key, value }));
    await admin.request(REGISTER_CLUSTER, { input: { name: c.name, labels } });
    result.registeredClusters.push(c.name);
  }

  const { queues } = await admin.request<{ queues: { name: string }[] }>(LIST_QUEUES);
  const existing = new Set(queues.map((q) => q.name));
  for (const q of DEMO_QUEUES) {
    if (existing.has(q.name)) continue;
    await admin.request(CREATE_QUEUE, { input: { name: q.name, parent: q.parent, priority: q.priority } });
    result.createdQueues.push(q.name);
  }
  const created = new Set(result.createdQueues);
  for (const quota of DEMO_QUOTAS) {
    if (!created.has(quota.queue)) continue;
    const { queue, cluster, resource, ...values } = quota;
    await admin.request(SET_QUOTA, { input: { queue, cluster, resource, ...values } });
  }

  const token = async (name: string, input: Record<string, unknown>): Promise<string> => {
    const saved = files.read(name);
    if (saved && (await works(admin, saved))) return saved;
    const { createToken } = await admin.request<{ createToken: { secret: string } }>(CREATE_TOKEN, {
      input: { name, ...input },
    });
    files.write(name, createToken.secret);
    result.createdTokens.push(name);
    return createToken.secret;
  };
  for (const [name, scope] of Object.entries(DEMO_MEMBERS)) {
    result.tokens.members[name] = await token(name, { role: "MEMBER", queues: scope });
  }
  for (const c of clusters) {
    result.tokens.agents[c.name] = await token(agentTokenName(c.name), { role: "AGENT", cluster: c.name });
  }
  result.tokens.viewer = await token(DEMO_VIEWER, { role: "VIEWER" });
  return result;
}

/** A saved secret is still a valid token of this deployment (not revoked, same database). */
async function works(admin: ApiClient, secret: string): Promise<boolean> {
  try {
    await new ApiClient({ url: admin.url, token: secret }).request(ME);
    return true;
  } catch (e) {
    if (e instanceof ApiError && e.code === "UNAUTHENTICATED") return false;
    throw e;
  }
}
