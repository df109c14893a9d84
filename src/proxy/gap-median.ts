/** The smallest gap told apart (ms): shorter ones (events of one burst) share the first bin. */
const MIN_GAP_MS = 0.125;
/** Bins per doubling of the gap: a median within ±4.5% of the exact one. */
const BINS_PER_OCTAVE = 8;
/** 23 doublings above 0.125 ms: up to ~17 minutes; longer gaps share the last bin. */
const BINS = 23 * BINS_PER_OCTAVE;
/** Each bin's value: its geometric middle. */
const BIN_MIDDLE = Float64Array.from({ length: BINS }, (_, i) => MIN_GAP_MS * 2 ** ((i + 0.5) / BINS_PER_OCTAVE));

/**
 * The median of a stream's gaps so far, cheap enough to keep per event: a fixed histogram of
 * gaps on a log scale, and the bin that holds the (lower) median, moved by at most a step or
 * two per gap added instead of sorting anything. Exact to a bin (±4.5%), which is all a stall
 * judged at many times the median needs.
 */
export class GapMedian {
  private readonly counts = new Uint32Array(BINS);
  /** Gaps added. */
  private n = 0;
  /** The bin holding the median, and how many gaps lie in the bins below it. */
  private bin = 0;
  private below = 0;

  get gaps(): number {
    return this.n;
  }

  add(gapMs: number): void {
    const b = gapMs <= MIN_GAP_MS ? 0 : Math.min(BINS - 1, Math.floor(Math.log2(gapMs / MIN_GAP_MS) * BINS_PER_OCTAVE));
    const counts = this.counts;
    counts[b]++;
    this.n++;
    if (b < this.bin) this.below++;
    // The lower median is the gap of rank k (0-based): its bin is the one whose range of ranks holds k.
    const k = (this.n - 1) >> 1;
    while (k < this.below) this.below -= counts[--this.bin];
    while (k >= this.below + counts[this.bin]) this.below += counts[this.bin++];
  }

  /** The median gap in ms (0 before any gap). */
  get medianMs(): number {
    return this.n === 0 ? 0 : BIN_MIDDLE[this.bin];
  }
}
