// Dividing capacity among sibling queues, per resource, top-down (KAI:
// plugins/proportion/resource_division): first each queue's deserved quota (up to what
// it can use), then what is left over quota by priority, in weighted rounds, rounded
// down to whole units, and the remainders one unit at a time.
import { type Quantities, type QueueShare, RESOURCES, type ResourceName, UNLIMITED } from "./queue-share.js";

/** Set `fairShare` of `queues` (siblings) dividing `total`, then recurse into their children. */
export function divideFairShare(
  total: Quantities,
  kValue: number,
  queues: QueueShare[],
  childrenOf: (q: QueueShare) => QueueShare[],
): void {
  if (queues.length === 0) return;
  for (const r of RESOURCES) divideResource(total[r], kValue, r, queues);
  for (const q of queues) divideFairShare(q.fairShare(), kValue, childrenOf(q), childrenOf);
}

function divideResource(total: number, kValue: number, r: ResourceName, queues: QueueShare[]): void {
  let remaining = total;
  for (const q of queues) {
    const s = q.shares[r];
    const deserved = s.deserved === UNLIMITED ? total : s.deserved;
    const amount = Math.min(deserved, s.requestable());
    s.fairShare += amount;
    remaining -= amount;
  }
  if (remaining > 0) divideOverQuota(remaining, kValue, r, queues);
}

interface Remainder {
  queue: QueueShare;
  amount: number;
}

function divideOverQuota(total: number, kValue: number, r: ResourceName, queues: QueueShare[]): number {
  const priorities = [...new Set(queues.map((q) => q.queue.priority))].sort((a, b) => b - a);
  const remainders = new Map<number, Map<QueueShare, Remainder>>();
  let remaining = total;
  for (const p of priorities) {
    const level = queues.filter((q) => q.queue.priority === p);
    const res = divideUpToFairShare(remaining, kValue, level, r);
    remaining = res.remaining;
    remainders.set(p, res.remainders);
  }
  for (const p of priorities) {
    if (remaining <= 0) break;
    const rem = remainders.get(p);
    if (!rem || rem.size === 0) continue;
    remaining = divideRemainders(remaining, [...rem.values()], r);
  }
  return remaining;
}

function remainingRequested(q: QueueShare, r: ResourceName): number {
  const s = q.shares[r];
  const req = s.requestable();
  return req < s.fairShare ? 0 : req - s.fairShare;
}

function isSatisfied(q: QueueShare, r: ResourceName): boolean {
  const s = q.shares[r];
  if (s.request <= s.fairShare) return true;
  return s.maxAllowed !== UNLIMITED && s.maxAllowed <= s.fairShare;
}

function divideUpToFairShare(
  total: number,
  kValue: number,
  queues: QueueShare[],
  r: ResourceName,
): { remaining: number; remainders: Map<QueueShare, Remainder> } {
  const remainders = new Map<QueueShare, Remainder>();
  for (;;) {
    let again = false;
    const roundAmount = total;
    const { weights, sum } = shareWeights(queues, r, kValue);
    if (sum === 0) break;
    for (const q of queues) {
      if (total === 0) break;
      if (isSatisfied(q, r)) continue;
      const s = q.shares[r];
      const requested = remainingRequested(q, r);
      if (s.overQuotaWeight === 0) continue;
      const portion = roundAmount * ((weights.get(q) ?? 0) / sum);
      let give = 0;
      if (requested <= portion) {
        give = requested;
        remainders.delete(q);
      } else {
        // Over-quota shares are handed out in whole units; the fractions are kept for the end.
        const whole = Math.floor(portion);
        if (whole > 0) give = whole;
        if (portion - give > 0) remainders.set(q, { queue: q, amount: portion - give });
      }
      if (give === 0) continue;
      s.fairShare += give;
      total -= give;
      again ||= requested < portion;
    }
    if (!again || total === 0) break;
  }
  return { remaining: total, remainders };
}

function shareWeights(
  queues: QueueShare[],
  r: ResourceName,
  kValue: number,
): { weights: Map<QueueShare, number>; sum: number } {
  let totalWeight = 0;
  for (const q of queues) if (remainingRequested(q, r) > 0) totalWeight += q.shares[r].overQuotaWeight;
  const weights = new Map<QueueShare, number>();
  if (totalWeight === 0) return { weights, sum: 0 };
  let sum = 0;
  for (const q of queues) {
    if (isSatisfied(q, r)) continue;
    const s = q.shares[r];
    const n = s.overQuotaWeight / totalWeight;
    const w = Math.max(0, n + kValue * (n - s.usage));
    weights.set(q, w);
    sum += w;
  }
  return { weights, sum };
}

function divideRemainders(total: number, rems: Remainder[], r: ResourceName): number {
  rems.sort(
    (a, b) =>
      b.amount - a.amount ||
      a.queue.queue.createdAt - b.queue.queue.createdAt ||
      (a.queue.name < b.queue.name ? -1 : a.queue.name > b.queue.name ? 1 : 0),
  );
  for (const rem of rems) {
    if (total === 0) break;
    const give = Math.min(1, total);
    rem.queue.shares[r].fairShare += give;
    total -= give;
  }
  return total;
}
