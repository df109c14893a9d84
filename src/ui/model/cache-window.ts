import type { Usage } from '../../protocols/core/usage.js';

/**
 * A tier's prompt-cache hit rate over its last `size` answers whose server reported its cache:
 * the share of their prompt tokens it read from the cache instead of evaluating them again.
 * Recent answers only, so a session that started missing (a changed prefix, a second session
 * evicting the first from a one-slot server) shows now, not diluted by the hour before.
 */
export class CacheWindow {
  private readonly prompts: number[] = [];
  private readonly hits: number[] = [];
  private next = 0;
  private prompt = 0;
  private cached = 0;

  constructor(private readonly size = 20) {}

  /** One answer's usage; answers whose server said nothing of its cache do not count. */
  add(usage: Usage | undefined): void {
    if (usage?.cached_tokens === undefined || usage.prompt_tokens <= 0) return;
    const cached = Math.min(usage.cached_tokens, usage.prompt_tokens);
    if (this.prompts.length === this.size) {
      this.prompt -= this.prompts[this.next];
      this.cached -= this.hits[this.next];
    }
    this.prompts[this.next] = usage.prompt_tokens;
    this.hits[this.next] = cached;
    this.next = (this.next + 1) % this.size;
    this.prompt += usage.prompt_tokens;
    this.cached += cached;
  }

  /** 0..1; null when no answer reported its cache. */
  hitRate(): number | null {
    return this.prompt > 0 ? this.cached / this.prompt : null;
  }
}
