// How a pass cuts its jobs into chunks (decided and committed one after the other).

/** Ids in chunks of at most `jobs` jobs and about `pods` pods (always at least one job). */
export function* chunks(
  list: readonly { id: string; pods: number }[],
  jobs: number,
  pods: number,
): Generator<string[]> {
  let chunk: string[] = [];
  let total = 0;
  for (const j of list) {
    if (chunk.length && (chunk.length >= jobs || total + j.pods > pods)) {
      yield chunk;
      chunk = [];
      total = 0;
    }
    chunk.push(j.id);
    total += j.pods;
  }
  if (chunk.length) yield chunk;
}
