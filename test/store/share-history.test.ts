// The fair-share history's plan, without a database: which minute a sample stands for, which
// minutes are folded (whole hours a day old) and how (the hour's average; unlimited stays so).
import { expect, it } from "vitest";
import {
  foldBefore,
  foldToHours,
  historyHorizon,
  MAX_SHARE_SAMPLES,
  sampleMinute,
  type ShareSample,
} from "../../src/store/domain/share-history.js";

const v = (gpu: number, cpuMillis = 0, memory = 0) => ({ gpu, cpuMillis, memory });
const sample = (queue: string, at: string, gpu: number, deserved = 4): ShareSample => ({
  queue,
  at: new Date(at),
  spanSeconds: 60,
  deserved: v(deserved),
  fairShare: v(gpu + 1, 1000 * gpu),
  allocated: v(gpu, 0, 2 ** 40),
});

it("stands a sample for its minute, folds whole hours a day old, keeps a week", () => {
  const now = new Date("2026-12-06T10:42:31.500Z");
  expect(sampleMinute(now).toISOString()).toBe("2026-12-06T10:42:00.000Z");
  expect(foldBefore(now).toISOString()).toBe("2026-12-05T10:00:00.000Z");
  expect(historyHorizon(now).toISOString()).toBe("2026-11-29T10:42:31.500Z");
  expect(MAX_SHARE_SAMPLES).toBe(1440 + 144 + 60);
});

it("folds an hour's samples per queue into their average; unlimited anywhere stays unlimited", () => {
  const hours = foldToHours([
    sample("a", "2026-12-05T08:01:00Z", 1),
    sample("a", "2026-12-05T08:59:00Z", 3, -1),
    sample("b", "2026-12-05T08:30:00Z", 2),
    sample("a", "2026-12-05T09:00:00Z", 6),
  ]);
  expect(hours).toEqual([
    {
      queue: "a",
      at: new Date("2026-12-05T08:00:00Z"),
      spanSeconds: 3600,
      deserved: v(-1),
      fairShare: v(3, 2000),
      allocated: v(2, 0, 2 ** 40),
    },
    { ...sample("b", "2026-12-05T08:00:00Z", 2), spanSeconds: 3600 },
    { ...sample("a", "2026-12-05T09:00:00Z", 6), spanSeconds: 3600 },
  ]);
});
