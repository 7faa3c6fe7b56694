// Waits for a condition (an assertion that stops throwing), generously: the machine is
// shared and noisy, so tests wait for states, never for durations.
import { vi } from "vitest";

export function until<T>(check: () => T | Promise<T>, timeout = 30_000): Promise<T> {
  // Not much more often than a state can change: each look may be a GraphQL query that counts
  // against its token's rate limit, and tests run beside each other.
  return vi.waitFor(check, { timeout, interval: 200 });
}
