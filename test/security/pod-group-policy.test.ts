// Pods users create in a cluster may charge only the queues mapped to their namespace, at most at
// the queue's priority; a refused group gets no job and an event saying why.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gqlOk, registerClusterWithAgent, startTestApi, type TestApi } from "../helpers/api.js";
import { sql } from "../helpers/db.js";

let t: TestApi;
let agent: string;
const REPORT = 'mutation($g: [PodGroupReport!]!) { reportPodGroups(cluster: "c1", groups: $g) }';
const group = (namespace: string, name: string, queue: string, priority: number | null = null) => ({
  namespace,
  name,
  queue,
  minMember: null,
  priority,
  pods: [{ name: `${name}-0`, resources: { cpu: 1000 } }],
});

beforeAll(async () => {
  t = await startTestApi();
  const admin = (q: string) => gqlOk(t.url, t.adminToken, q);
  await admin(
    `mutation { createQueue(input: { name: "research", namespaces: ["ml"], priority: 60 }) { name } }`,
  );
  await admin(`mutation { createQueue(input: { name: "prod", namespaces: ["serving"] }) { name } }`);
  agent = await registerClusterWithAgent(t);
});
afterAll(async () => t?.close());

describe("pod groups created in a cluster", () => {
  it("a namespace charges only its queues; the others are refused with a reason, the rest of the report goes through", async () => {
    const r = await gqlOk<{ reportPodGroups: number }>(t.url, agent, REPORT, {
      g: [group("ml", "sweep", "research"), group("ml", "steal", "prod")],
    });
    expect(r.reportPodGroups).toBe(1);
    const jobs = await sql(t.db.url, `SELECT name, queue_name AS "queueName" FROM job`);
    expect(jobs).toEqual([{ name: "sweep", queueName: "research" }]);
    const refused = await sql<{ message: string }>(
      t.db.url,
      "SELECT message FROM event WHERE kind = 'podgroup.refused'",
    );
    expect(refused).toHaveLength(1);
    expect(refused[0]!.message).toMatch(/ml\/steal.*namespace "ml" may not charge queue prod/);
  });

  it("a group's priority is capped by its queue's", async () => {
    await gqlOk(t.url, agent, REPORT, { g: [group("ml", "urgent", "research", 100_000)] });
    const [job] = await sql(t.db.url, "SELECT priority, preemptible FROM job WHERE name = 'urgent'");
    expect(job).toMatchObject({ priority: 60, preemptible: true });
  });
});
