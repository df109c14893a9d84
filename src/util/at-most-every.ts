/**
 * `read`, called at most once every `ms`: callers in between share the last call's promise. For
 * a value many callers ask for often (a status line's "today's cost") and that costs a query.
 */
export function atMostEvery<T>(ms: number, read: () => Promise<T>, now: () => number = Date.now): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | null = null;
  return () => {
    const at = now();
    if (last === null || at - last.at >= ms) last = { at, value: read() };
    return last.value;
  };
}
