// Branch scaffolding: the Gemini client codec, wire codec and profile are written on this
// branch's two halves; this file and its uses are gone before the branch lands.
export function unbuilt<T extends object>(what: string, known: Record<string, unknown> = {}): T {
  return new Proxy({} as T, {
    get(_target, key) {
      if (typeof key === 'string' && key in known) return known[key];
      if (key === 'then' || typeof key === 'symbol') return undefined;
      throw new Error(`${what} is not built yet (${String(key)})`);
    },
    has(_target, key) {
      return typeof key === 'string' && key in known;
    },
  });
}
