// Kubernetes quantities: one parser for the API's inputs, the agents' reports and cluster files.
import { describe, expect, it } from "vitest";
import { submitJobInputSchema } from "../../src/store/index.js";
import { cpuMillis, parseBytes, parseQuantity } from "../../src/protocol/quantity.js";

describe("quantities", () => {
  it("reads plain, decimal-suffixed, binary-suffixed, exponent and fractional quantities", () => {
    expect(parseQuantity("2")).toBe(2);
    expect(parseQuantity("500m")).toBe(0.5);
    expect(parseQuantity("16Gi")).toBe(16 * 2 ** 30);
    expect(parseQuantity("1.5Gi")).toBe(1.5 * 2 ** 30);
    expect(parseQuantity("1e3")).toBe(1000);
    expect(parseQuantity("2E")).toBe(2e18);
    expect(parseQuantity("128974848Ki")).toBe(128974848 * 1024);
    expect(cpuMillis("250m")).toBe(250);
    expect(() => parseQuantity("12 GB")).toThrow('not a Kubernetes quantity: "12 GB"');
  });

  it("gives exact byte counts, a fraction of a byte rounded up", () => {
    expect(parseBytes("1.5Gi")).toBe(1610612736n);
    expect(parseBytes("8Ei")).toBe(8n * 2n ** 60n);
    expect(parseBytes("17179869184")).toBe(17179869184n);
    expect(parseBytes("1.5")).toBe(2n);
    expect(parseBytes(4096)).toBe(4096n);
    for (const bad of ["-1Gi", "Gi", "1.5.2", "", -3, 1.5, null]) expect(parseBytes(bad)).toBeNull();
  });

  it("the API accepts what the agents report: memory 1.5Gi", () => {
    const r = submitJobInputSchema.safeParse({
      name: "j",
      queue: "q",
      tasks: [{ name: "t", replicas: 1, resources: { memory: "1.5Gi" } }],
    });
    expect(r.success).toBe(true);
    expect(r.data?.tasks[0]?.resources.memory).toBe(1610612736n);
  });
});
