import type { StallConfig } from '../config/schema.js';
import { AttemptError, timeoutError } from './attempt-error.js';
import { GapMedian } from './gap-median.js';

/** On a resume route: the learned stall's rule, and whether a recovery could mend the stream now. */
export interface StallWatch {
  rule: StallConfig;
  /** A stall is called only while this holds (a stream inside a tool call or reasoning waits for idle_ms). */
  mendable(): boolean;
}

/** How early a timer may fire by the event loop's millisecond clock and still be on time. */
const TIMER_SLACK_MS = 1;

/**
 * What ends a committed stream's silence: `idle_ms` without content, and on a resume route the
 * learned stall (docs/recovery.md) — silence longer than `stall.factor` times the stream's own
 * median gap between content, and than `stall.floor_ms`, once it has shown `stall.after` gaps.
 * Only content ends a silence (`progress`, once per chunk that carried any): keep-alives are
 * not progress. One timer, armed for the earliest limit and moved only when it fires (the
 * silence is measured then, and the timer re-armed for what is left) or when a quickened pace
 * brings the stall before it: no timer work per event, and never late.
 */
export class SilenceGuard {
  /** performance.now() at the last content (a gap's start), and when the silence began (the client's pause restarts it). */
  private lastProgressAt: number;
  private silentSince: number;
  private timer: NodeJS.Timeout;
  /** When the timer is due (performance.now() scale): never after the limit it guards. */
  private firesAt: number;
  private readonly pace: GapMedian | null;

  constructor(
    private readonly idleMs: number,
    private readonly stall: StallWatch | undefined,
    /** The client is not reading: the upstream is paused by llm-route, so that silence is not its own. */
    private readonly clientPaused: () => boolean,
    private readonly ended: (err: AttemptError) => void,
  ) {
    const now = performance.now();
    this.lastProgressAt = this.silentSince = now;
    this.pace = stall ? new GapMedian() : null;
    this.firesAt = now + idleMs;
    this.timer = setTimeout(SilenceGuard.due, idleMs, this);
  }

  /** Content came: its silence ends, and on a resume route one gap of its pace. */
  progress(): void {
    const now = performance.now();
    this.silentSince = now;
    const pace = this.pace;
    if (pace === null) return;
    pace.add(now - this.lastProgressAt);
    this.lastProgressAt = now;
    // A quicker pace brings the stall before the timer: it moves up (rare: the limit is at least floor_ms).
    const stallAt = now + this.stallLimitMs();
    if (stallAt < this.firesAt) this.arm(stallAt, now);
  }

  /** The client reads again: the silence starts now. */
  restart(): void {
    this.silentSince = performance.now();
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  /** The silence that is a stall (Infinity until the stream has shown `stall.after` gaps). */
  private stallLimitMs(): number {
    const pace = this.pace;
    const stall = this.stall;
    if (pace === null || stall === undefined || pace.gaps < stall.rule.after) return Infinity;
    return Math.max(stall.rule.floor_ms, stall.rule.factor * pace.medianMs);
  }

  private stallError(limitMs: number): AttemptError {
    const { rule } = this.stall as StallWatch;
    const medianMs = (this.pace as GapMedian).medianMs;
    return new AttemptError(
      'stall_timeout',
      `stalled: no content for ${Math.round(limitMs)} ms where this stream's median gap was ${roundMs(medianMs)} ms (stall: factor ${rule.factor}, floor_ms ${rule.floor_ms})`,
      { phase: 'idle', failover: true, retryable: false, timedOut: true },
    );
  }

  private arm(at: number, now: number): void {
    clearTimeout(this.timer);
    this.firesAt = at;
    this.timer = setTimeout(SilenceGuard.due, Math.max(1, Math.ceil(at - now)), this);
  }

  private static due(guard: SilenceGuard): void {
    const now = performance.now();
    if (guard.clientPaused()) guard.silentSince = now;
    const silence = now - guard.silentSince;
    const stallMs = guard.stallLimitMs();
    const mendable = stallMs < guard.idleMs && (guard.stall?.mendable() ?? false);
    if (mendable && silence + TIMER_SLACK_MS >= stallMs) return guard.ended(guard.stallError(stallMs));
    if (silence + TIMER_SLACK_MS >= guard.idleMs) return guard.ended(timeoutError('idle_timeout', guard.idleMs, 'idle'));
    guard.arm(guard.silentSince + (mendable ? stallMs : guard.idleMs), now);
  }
}

function roundMs(ms: number): number {
  return ms < 10 ? Math.round(ms * 10) / 10 : Math.round(ms);
}
