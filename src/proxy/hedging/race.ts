import type { HedgedStream, RequestFinished } from '../../telemetry/events.js';
import type { AttemptError } from '../attempt-error.js';
import type { Flight } from '../attempt-start.js';
import type { CommitResult } from '../stream-attempt.js';
import type { HedgeDoor } from './hedge-door.js';

/**
 * Hedged first tokens (docs/hedging.md): when the attempt in flight
 * has no first content `hedge_ms` after it started, the next tier starts as well; the first of
 * the two to commit wins, the other is stopped in that same instant (its socket destroyed).
 * At most two in flight, and none started after a commit.
 */

/** A race that was won: who started when, who won; the loser's tokens when its upstream reported any. */
export interface HedgeEnd {
  hedged: HedgedStream;
  loserUsage?: RequestFinished['loserUsage'];
}

export type RaceEnd =
  /** The flight settled with no other attempt in flight: its own commit or failure. */
  | { kind: 'alone'; result: CommitResult }
  /** One of two committed; the loser was stopped before it could write a byte. */
  | { kind: 'won'; winner: Flight; result: CommitResult & { committed: true }; loser: Flight; hedged: HedgedStream }
  /** The first failed while its hedge runs on: the hedge is now the attempt in flight. */
  | { kind: 'handed'; error: AttemptError; next: Flight };

/** What racing needs of the routing loop: a hedge started as any attempt is, and a failed one recorded. */
export interface HedgeSteps {
  /** Opens the tiers after plan index `after` (fit, limits, budgets) and starts the first that opens, through the door; null: none. */
  start(after: number): Promise<Flight | null>;
  /** A hedge that failed while the first runs on: recorded, its tier's hold given back. */
  failed(hedge: Flight, error: AttemptError): void;
}

/**
 * Waits for the flight in flight, starting a hedge once `hedgeMs` passed since the flight
 * started without its first content. A hedge that fails leaves the first alone; the next
 * hedge is timed from the first's start again (so it starts at once, on the tier after).
 */
export async function race(first: Flight, hedgeMs: number, door: HedgeDoor, arrivedAt: number, steps: HedgeSteps): Promise<RaceEnd> {
  const own = first.attempt.committed;
  let settled: CommitResult | null = null;
  void own.then((result) => (settled = result));
  let after = first.t;
  for (;;) {
    if (!(await timesOut(own, hedgeMs - first.attempt.elapsedMs))) return { kind: 'alone', result: await own };
    // Its first bytes came in time and it is writing a tool call as text: the tier is answering, no hedge.
    if (first.attempt.holdingForm) return { kind: 'alone', result: await own };
    const atMs = Math.round(performance.now() - arrivedAt);
    const hedge = settled ? null : await steps.start(after);
    if (!hedge) return { kind: 'alone', result: await own };
    after = hedge.t;
    // The first committed while the hedge's tier was being opened (a limit's wait): it is ahead, the hedge never started.
    const early = settled as CommitResult | null;
    if (early?.committed) return { kind: 'alone', result: early };
    const next = await Promise.race([own.then((r) => ({ flight: first, r })), hedge.attempt.committed.then((r) => ({ flight: hedge, r }))]);
    // A commit stops the other inside it, so the loser's verdict can come first: the winner's follows.
    const other = next.flight === first ? hedge : first;
    const done = !next.r.committed && next.r.error.reason === 'hedge_lost' ? { flight: other, r: await other.attempt.committed } : next;
    if (done.r.committed) {
      const [winner, loser] = done.flight === first ? [first, hedge] : [hedge, first];
      return {
        kind: 'won',
        winner,
        result: done.r,
        loser,
        hedged: { at_ms: atMs, winner: winner.tier.name, loser: loser.tier.name, result: winner === first ? 'first_won' : 'second_won' },
      };
    }
    door.leave(done.flight.attempt);
    if (done.flight === first) return { kind: 'handed', error: done.r.error, next: hedge };
    steps.failed(hedge, done.r.error);
  }
}

/** true when `ms` pass before `promise` settles; no timer at all when it has already passed. */
function timesOut(promise: Promise<unknown>, ms: number): Promise<boolean> {
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms, true);
    void promise.then(() => {
      clearTimeout(timer);
      resolve(false);
    });
  });
}
