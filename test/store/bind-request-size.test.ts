// A BindRequest message names its pod's task; the template is fetched by reference
// (jobTemplates), so the message is the same size whatever the template's.
import { afterAll, beforeAll, expect, it } from "vitest";
import { bindRequestMessages } from "../../src/store/operations/dispatch.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { jobTemplates } from "../../src/store/queries/job-templates.js";
import { MAX_TEMPLATE_BYTES } from "../../src/store/validation/submit-job.js";
import { runCycle } from "../helpers/cycle.js";
import type { TestStore } from "../helpers/store.js";
import { admin, storeWithC1 } from "./fixtures.js";

let t: TestStore;
beforeAll(async () => {
  t = await storeWithC1();
});
afterAll(async () => t?.close());

const template = (bytes: number) => ({
  spec: { containers: [{ name: "main", image: "busybox", args: ["x".repeat(bytes)] }] },
});

it("does not grow with the template", async () => {
  const small = template(10);
  const large = template(MAX_TEMPLATE_BYTES - 1000);
  const ids: string[] = [];
  for (const [name, tpl] of [
    ["small", small],
    ["large", large],
  ] as const) {
    const { job } = await submitJob(t.store, admin, {
      name,
      queue: "team-a",
      cluster: "c1",
      tasks: [{ name: "main", replicas: 1, resources: { cpu: 1000, memory: "1Gi", gpu: 1 }, template: tpl }],
    });
    ids.push(job.id);
  }
  const { bindRequests } = await runCycle(t.store, "c1");
  const messages = await bindRequestMessages(
    t.store,
    bindRequests.map((b) => b.id),
  );
  expect(messages).toHaveLength(2);
  const size = (job: string) => JSON.stringify(messages.find((m) => m.job.id === job)).length;
  // Same shape, names of one length: the same size.
  expect(size(ids[1]!)).toBe(size(ids[0]!));
  expect(messages[0]!.pod.task).toBe("main");
  // The agent fetches the template by reference.
  expect((await jobTemplates(t.store, ids[1]!))?.tasks).toEqual([{ name: "main", template: large }]);
});

it("refuses a template above the cap", async () => {
  await expect(
    submitJob(t.store, admin, {
      name: "huge",
      queue: "team-a",
      tasks: [{ name: "main", replicas: 1, resources: {}, template: template(MAX_TEMPLATE_BYTES) }],
    }),
  ).rejects.toThrow(/template must be at most 262144 bytes/);
});
