import { describeReadiness, type Readiness } from '../health/readiness.js';
import type { ProviderOutput } from '../telemetry/events.js';
import type { ExitStatus, GroupProcess } from './process-group.js';

// What a start command says while llm-route waits for its provider: its output relayed line by
// line (and its last lines kept for an error), how it exited, and llm-route's own status lines
// while the server says it is loading (start-provider.ts runs the command and waits).

/** One line of the command's output, or one of llm-route's `status` lines about it. */
export type OutputLine = (stream: ProviderOutput['stream'], line: string) => void;

/** While a server says it is loading, a status line at most this often shows the wait. */
const LOADING_REPORT_MS = 5_000;
const TAIL_LINES = 10;
const TAIL_LINE_CHARS = 300;
/** The most of an unfinished line kept while it waits for its \n. */
const PENDING_CHARS = 4_096;

/**
 * Status lines while a server says it is loading: one when it starts, then one every few
 * seconds with the wait so far, so the log and the UI show why nothing serves yet.
 */
export class LoadingReport {
  private since: number | null = null;
  private reportedAt = 0;
  private endedMs = 0;

  constructor(private readonly onOutput: OutputLine) {}

  saw(readiness: Readiness): void {
    const now = Date.now();
    if (readiness.state !== 'loading') {
      if (this.since !== null) this.endedMs += now - this.since;
      this.since = null;
      return;
    }
    if (this.since === null) {
      this.since = now;
      this.reportedAt = now;
      this.onOutput('status', `answering, ${describeReadiness(readiness)}; waiting`);
    } else if (now - this.reportedAt >= LOADING_REPORT_MS) {
      this.reportedAt = now;
      this.onOutput('status', `${describeReadiness(readiness)}: waited ${((now - this.since) / 1000).toFixed(1)} s so far`);
    }
  }

  totalMs(): number {
    return this.endedMs + (this.since === null ? 0 : Date.now() - this.since);
  }
}

/** The last lines of a command's output, for the error that explains why it failed. */
export class OutputTail {
  private readonly lines: string[] = [];

  push(stream: 'stdout' | 'stderr', line: string): void {
    const short = line.length > TAIL_LINE_CHARS ? `${line.slice(0, TAIL_LINE_CHARS)}…` : line;
    this.lines.push(`[${stream}] ${short}`);
    if (this.lines.length > TAIL_LINES) this.lines.shift();
  }

  /** `; last output:` and the lines, indented; '' when there was none. */
  describe(): string {
    return this.lines.length === 0 ? '' : `; last output:\n${this.lines.map((line) => `  ${line}`).join('\n')}`;
  }
}

export function relayOutput(child: GroupProcess, onOutput: OutputLine): OutputTail {
  const tail = new OutputTail();
  for (const stream of ['stdout', 'stderr'] as const) {
    const say = (line: string): void => {
      // Progress bars redraw a line with \r: only what it finally shows is kept.
      const text = line.replace(/\r+$/, '').split('\r').at(-1) ?? '';
      tail.push(stream, text);
      onOutput(stream, text);
    };
    // Lines end at \n only (readline would end one at each \r too, and relay every redraw).
    let pending = '';
    const input = child[stream];
    input.setEncoding('utf8');
    input.on('data', (chunk: string) => {
      const lines = (pending + chunk).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) say(line);
      // A bar that only redraws (\r, never \n): what it shows now is all that is kept of it.
      if (pending.length > PENDING_CHARS) {
        const shown = pending.replace(/\r+$/, '');
        pending = shown.slice(shown.lastIndexOf('\r') + 1).slice(-PENDING_CHARS);
      }
    });
    input.on('end', () => {
      if (pending !== '') say(pending);
      pending = '';
    });
  }
  return tail;
}

export function describeExit(status: ExitStatus): string {
  if (status.code !== null) return `exited with code ${status.code}`;
  if (status.signal !== null) return `was killed by ${status.signal}`;
  return 'could not be run';
}
