// Bus events → an async iterator for one subscription: filtered, mapped, buffered (bounded: a
// subscriber that stops reading loses the oldest events, not the server's memory).
import type { RedisEventBus, StoreEvent } from "../store/index.js";

const MAX_BUFFERED = 1000;

export async function eventStream<T>(
  bus: RedisEventBus,
  map: (e: StoreEvent) => Promise<T | null> | T | null,
): Promise<AsyncIterableIterator<T>> {
  const buffered: StoreEvent[] = [];
  let wake: (() => void) | null = null;
  let done = false;
  const stop = await bus.listen((e) => {
    if (done) return;
    buffered.push(e);
    if (buffered.length > MAX_BUFFERED) buffered.shift();
    wake?.();
  });
  const finish = async (): Promise<IteratorResult<T>> => {
    done = true;
    stop();
    wake?.();
    return { done: true, value: undefined };
  };
  const iterator: AsyncIterableIterator<T> = {
    async next(): Promise<IteratorResult<T>> {
      while (!done) {
        const e = buffered.shift();
        if (!e) {
          await new Promise<void>((r) => {
            wake = r;
          });
          wake = null;
          continue;
        }
        const value = await map(e);
        if (value !== null) return { done: false, value };
      }
      return { done: true, value: undefined };
    },
    return: finish,
    throw: async (err) => {
      await finish();
      throw err;
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}
