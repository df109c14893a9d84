/** What the progress bar needs of a stream: process.stderr fits. */
export interface TerminalStream {
  isTTY?: boolean;
  columns?: number;
  write(text: string): boolean;
}

const REDRAW_MS = 50;
const CLEAR_LINE = '\r\x1b[2K';

/**
 * A one-line progress bar, redrawn in place. It exists only on a terminal: piped stderr (CI
 * logs, tests) gets nothing, not a pile of carriage returns.
 */
export class ProgressBar {
  private lastDrawAt = Number.NEGATIVE_INFINITY;
  private drawn = false;

  private constructor(private readonly stream: TerminalStream) {}

  static on(stream: TerminalStream): ProgressBar | null {
    return stream.isTTY ? new ProgressBar(stream) : null;
  }

  update(done: number, total: number, label: string): void {
    const now = performance.now();
    // Redraws are throttled, but the last one always shows.
    if (done < total && now - this.lastDrawAt < REDRAW_MS) return;
    this.lastDrawAt = now;
    // A pseudo-terminal without a size reports 0 columns.
    const columns = this.stream.columns || 80;
    const count = `${done}/${total}`;
    const width = Math.max(10, Math.min(30, columns - count.length - 6));
    const filled = total === 0 ? width : Math.round((done / total) * width);
    const line = `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${count} ${label}`;
    this.stream.write(CLEAR_LINE + line.slice(0, Math.max(0, columns - 1)));
    this.drawn = true;
  }

  /** Removes the bar so the report starts on a clean line. */
  clear(): void {
    if (this.drawn) this.stream.write(CLEAR_LINE);
    this.drawn = false;
  }
}
