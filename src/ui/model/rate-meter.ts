/** Events per second over the last `seconds`, in one-second buckets: O(1) per event. */
export class RateMeter {
  private readonly counts: number[];
  private readonly stamps: number[];

  constructor(private readonly seconds = 10) {
    this.counts = new Array<number>(seconds).fill(0);
    this.stamps = new Array<number>(seconds).fill(-1);
  }

  mark(at: number): void {
    const second = Math.floor(at / 1000);
    const slot = second % this.seconds;
    if (this.stamps[slot] !== second) {
      this.stamps[slot] = second;
      this.counts[slot] = 0;
    }
    this.counts[slot]++;
  }

  /** The mean rate over the window ending at `now` (the current, partial second included). */
  perSecond(now: number): number {
    const current = Math.floor(now / 1000);
    let total = 0;
    for (let i = 0; i < this.seconds; i++) {
      if (current - this.stamps[i] < this.seconds) total += this.counts[i];
    }
    return total / this.seconds;
  }
}
