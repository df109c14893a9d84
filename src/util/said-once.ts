/**
 * Which notices were said already, so each is said once: `first(key)` is true the first time a
 * key is seen, while the set holds fewer than `bound` keys. Clients choose many keys (model
 * names, paths): past the bound nothing new is said, and memory stays bounded.
 */
export class SaidOnce {
  private readonly said = new Set<string>();

  constructor(private readonly bound = 1_000) {}

  first(key: string): boolean {
    if (this.said.has(key) || this.said.size >= this.bound) return false;
    this.said.add(key);
    return true;
  }
}
