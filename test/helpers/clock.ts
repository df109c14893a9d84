import type { Clock } from '../../src/util/clock.js';

/**
 * A clock that moves only when a test says so: cooldowns, TTLs and restores pass in an
 * instant. It starts at the real time, so ISO timestamps read sensibly.
 */
export class ManualClock implements Clock {
  private current = Date.now();
  private timers: Array<{ at: number; seq: number; fn: () => void }> = [];
  private seq = 0;

  now(): number {
    return this.current;
  }

  after(ms: number, fn: () => void): () => void {
    const timer = { at: this.current + ms, seq: this.seq++, fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  /** Moves time on by `ms`, running each timer that falls due on the way, in order, at its time. */
  advance(ms: number): void {
    const until = this.current + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.at <= until).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.current = Math.max(this.current, due.at);
      due.fn();
    }
    this.current = until;
  }

  /** Timers not yet run. */
  get pending(): number {
    return this.timers.length;
  }
}
