// How much an estimate run may compute per cluster: a share of the time since the worker's
// previous run began, so that estimates following every change of a busy cluster leave its
// cycles the core they need.
import { expect, it } from "vitest";
import { MIN_BUDGET_MS, runBudgetMs } from "../../workers/estimates/run-estimates.js";

it("a run computes at most its share of the time since the previous run, within its bounds", () => {
  // Runs following changes 10 s apart: a tenth of a core, not half of it.
  expect(runBudgetMs(5000, 0.1, 10_000)).toBe(1000);
  expect(runBudgetMs(5000, 0.1, 30_000)).toBe(3000);
  expect(runBudgetMs(5000, 0.5, 4000)).toBe(2000);
  // Never more than the budget set…
  expect(runBudgetMs(5000, 0.1, 600_000)).toBe(5000);
  // Shared by the clusters a run estimates: a worker owning four gets a quarter each.
  expect(runBudgetMs(5000, 0.1, 40_000, 4)).toBe(1000);
  // …and always enough for a session or two, however soon it follows.
  expect(runBudgetMs(5000, 0.1, 100)).toBe(MIN_BUDGET_MS);
  expect(runBudgetMs(100, 0.1, 100)).toBe(100);
});
