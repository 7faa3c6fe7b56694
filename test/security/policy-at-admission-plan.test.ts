// Which jobs admission refuses for their queue's current policy: the plan alone, no database.
import { describe, expect, it } from "vitest";
import { admissionRefusals } from "../../src/store/domain/admission-refusals.js";
import { effectivePolicy } from "../../src/store/domain/queue-policy.js";

const policy = (over: { namespaces?: string[]; podSecurity?: "BASELINE" | "RESTRICTED" | "PRIVILEGED" }) =>
  effectivePolicy([
    {
      name: "team",
      parentName: null,
      namespaces: over.namespaces ?? ["default"],
      podSecurity: over.podSecurity ?? null,
      defaultRequest: null,
    },
  ]);
const task = (template: unknown) => ({
  template,
  cpuMillis: 1000,
  memory: 2n ** 30n,
  gpus: 0,
  extendedResources: {},
});
const privileged = {
  spec: { containers: [{ name: "m", image: "x", securityContext: { privileged: true } }] },
};
const plain = { spec: { containers: [{ name: "m", image: "x" }] } };
const row = (id: string, template: unknown, namespace = "default") => ({
  id,
  name: id,
  namespace,
  queueName: "team",
  tasks: [task(plain), task(template)],
});

describe("admission refusals", () => {
  it("refuses a template the level no longer allows, naming the queue, the field and the rule", () => {
    const [r, ...rest] = admissionRefusals(
      [row("a", privileged), row("b", plain)],
      new Map([["team", policy({})]]),
    );
    expect(rest).toEqual([]);
    expect(r!.job).toBe("a");
    expect(r!.message).toMatch(/^job a refused at admission: queue team's policy no longer allows it: /);
    expect(r!.message).toMatch(/tasks\[1\]\.template\.spec\.containers\[0\]\.securityContext\.privileged: /);
    expect(r!.message).toMatch(/BASELINE/);
  });

  it("refuses a namespace the queue no longer lists", () => {
    const refused = admissionRefusals([row("a", plain, "ml")], new Map([["team", policy({})]]));
    expect(refused).toEqual([
      {
        job: "a",
        message: expect.stringMatching(
          /queue team's policy no longer allows it: namespace: namespace "ml" is not allowed/,
        ),
      },
    ]);
  });

  it("passes what the policy allows, and jobs whose queue's policy was not read", () => {
    const open = policy({ namespaces: ["default", "ml"], podSecurity: "PRIVILEGED" });
    expect(admissionRefusals([row("a", privileged, "ml")], new Map([["team", open]]))).toEqual([]);
    expect(admissionRefusals([row("a", privileged)], new Map())).toEqual([]);
  });
});
