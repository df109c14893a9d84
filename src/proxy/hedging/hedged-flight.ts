import type { AttemptError } from '../attempt-error.js';
import { type Flight, openTier, startStream } from '../attempt-start.js';
import { type FlightEnd, flightEnd, land } from '../flight.js';
import type { Walk } from '../walk.js';
import { HedgeDoor } from './hedge-door.js';
import { type HedgeEnd, race } from './race.js';

/**
 * Hedged first tokens around a streaming flight (docs/hedging.md), for a route with `hedge_ms`:
 * every attempt of the request commits through one door, so only one can; a flight without
 * first content `hedge_ms` after it started is raced by the next tier's. The routing loop
 * sees a flight's end as it would without hedging — committed, or failed — and, when the
 * first failed while its hedge runs on, the hedge handed to it as the next tier's first try.
 */
export class Hedging {
  readonly door: HedgeDoor;
  /** The race that was won, for the request's log line. */
  won: HedgeEnd | undefined;
  /** A hedge that became the attempt in flight when the one it hedged failed: the next tier's first try. */
  private handed: Flight | null = null;

  private constructor(
    private readonly walk: Walk,
    private readonly hedgeMs: number,
  ) {
    this.door = new HedgeDoor(walk.req.port, walk.req.log.records);
  }

  /** Hedging for this request: a stream on a route with hedge_ms and a tier to hedge with; else null (nothing made). */
  static for(walk: Walk): Hedging | null {
    const hedgeMs = walk.req.route.hedge_ms;
    return hedgeMs !== null && walk.req.request.stream && walk.plan.length > 1 ? new Hedging(walk, hedgeMs) : null;
  }

  /** The hedge handed to plan index `t` as its first try, taken; null when none was. */
  takeHanded(t: number): Flight | null {
    const flight = this.handed?.t === t ? this.handed : null;
    if (flight) this.handed = null;
    return flight;
  }

  /** A hedge runs on as the attempt in flight (the one it hedged failed). */
  get handing(): boolean {
    return this.handed !== null;
  }

  /** The flight to its commit or failure, raced by the next tier's once it has no first content in time; the plan's last tier arms no timer. */
  async fly(flight: Flight): Promise<FlightEnd> {
    if (flight.t >= this.walk.plan.length - 1) return land(flight);
    const end = await race(flight, this.hedgeMs, this.door, this.walk.req.arrivedAt, {
      start: (after) => this.start(after),
      failed: (hedge, error) => this.hedgeFailed(hedge, error),
    });
    if (end.kind === 'alone') return flightEnd(flight, end.result);
    if (end.kind === 'handed') {
      this.handed = end.next;
      return { committed: false, error: end.error, elapsedMs: flight.attempt.elapsedMs };
    }
    const { loser, hedged } = end;
    // Its upstream may have billed what it reported before the abort: the loser's tier is charged it.
    const usage = loser.attempt.usageSoFar;
    this.walk.req.log.hedgeLost(loser.tier, loser.n, loser.attempt.elapsedMs, hedged.winner, usage);
    this.won = { hedged, ...(usage ? { loserUsage: { tier: loser.tier.name, provider: loser.tier.provider.name, model: loser.tier.model, usage } } : {}) };
    return { committed: true, flight: end.winner, result: end.result };
  }

  /** The request ends (the client left, the server stops) while a hedge was handed on: its own end is recorded. */
  async abandon(): Promise<void> {
    const hedge = this.handed;
    const result = hedge && (await hedge.attempt.committed);
    if (hedge && result && !result.committed) this.walk.req.log.failed(hedge.tier, hedge.n, result.error, hedge.attempt.elapsedMs);
  }

  /** The next tier after plan index `after` that opens (each refusal noted as the loop would), its attempt started through the door. */
  private async start(after: number): Promise<Flight | null> {
    const walk = this.walk;
    for (let u = walk.nextUnopened(after); u < walk.plan.length; u++) {
      walk.open(u);
      const tier = walk.plan[u];
      const opened = await openTier(walk, tier);
      if (!opened.open) {
        if (opened.why === 'aborted') return null;
        walk.refused(tier, opened);
        continue;
      }
      // The first committed while this tier's limit was waited for: no hedge after a commit.
      const flight = this.door.committed ? null : startStream(walk, u, tier, opened.call, 1, { door: this.door, lastTier: walk.lastTierOf(u, opened.call) });
      if (flight && 'attempt' in flight) {
        walk.req.fellBack();
        return flight;
      }
      walk.req.log.left(tier);
      return null;
    }
    return null;
  }

  /** A hedge failed while the attempt it hedged runs on: recorded as any failure, its tier's hold given back. */
  private hedgeFailed(hedge: Flight, error: AttemptError): void {
    this.walk.req.log.failed(hedge.tier, hedge.n, error, hedge.attempt.elapsedMs);
    this.walk.notes.failed(hedge.tier, error);
    this.walk.req.log.left(hedge.tier);
  }
}
