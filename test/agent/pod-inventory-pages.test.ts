// The pages of a pod inventory cover every key exactly once, in order, each complete for its range.
import { describe, expect, it } from "vitest";
import { compareRefs, inventoryPages } from "../../src/agent/pod-inventory-pages.js";

describe("inventoryPages", () => {
  it("one page with open ends for an empty or small cluster", () => {
    expect(inventoryPages([])).toEqual([{ pods: [], after: null, through: null }]);
    const one = { jobId: "j1", pod: "w-0" };
    expect(inventoryPages([one, one])).toEqual([{ pods: [one], after: null, through: null }]);
  });

  it("pages in key order, each starting after the previous one's last pod, the last open-ended", () => {
    const refs = ["b/w-1", "a/w-0", "b/w-0", "a/w-10", "c/w-0"].map((k) => {
      const [jobId, pod] = k.split("/") as [string, string];
      return { jobId, pod };
    });
    const pages = inventoryPages(refs, 2);
    expect(pages.map((p) => p.pods.map((r) => `${r.jobId}/${r.pod}`))).toEqual([
      ["a/w-0", "a/w-10"],
      ["b/w-0", "b/w-1"],
      ["c/w-0"],
    ]);
    expect(pages.map((p) => p.after)).toEqual([
      null,
      { jobId: "a", pod: "w-10" },
      { jobId: "b", pod: "w-1" },
    ]);
    expect(pages.map((p) => p.through)).toEqual([
      { jobId: "a", pod: "w-10" },
      { jobId: "b", pod: "w-1" },
      null,
    ]);
    expect(compareRefs({ jobId: "a", pod: "w-10" }, { jobId: "a", pod: "w-2" })).toBe(-1);
  });
});
