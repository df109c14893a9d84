import type { Tier } from '../config/schema.js';
import type { UpstreamCall } from '../protocols/call.js';
import type { AttemptReason } from '../protocols/core/names.js';
import type { AttemptSite, Opening } from './attempt-start.js';
import { LastTier } from './last-tier.js';
import { NoAnswerNotes } from './no-answer.js';
import { planTiers } from './plan.js';
import type { RoutingRequest, RoutingView } from './routing.js';
import { answeredBy, sessionTier } from './session-stay.js';

/**
 * One request's way through its plan: the tiers it tries, in order, which of them were opened
 * (a hedge opens tiers ahead of the routing loop, and the loop does not open them again), the
 * route's deadline, and what the tiers said that did not answer (its notes, read when none does).
 */
export class Walk implements AttemptSite {
  readonly plan: Tier[];
  readonly allDown: boolean;
  readonly deadlineAt: number;
  readonly notes = new NoAnswerNotes();
  /** Plan indexes below this one were opened. */
  private opened = 0;
  /** The request's session when the plan asked for it: the tier that answers is remembered for its next turn. */
  private readonly session: string | undefined;

  constructor(
    readonly req: RoutingRequest,
    readonly app: RoutingView,
  ) {
    // The request's session, asked for only when the plan meets a weighted tier (a draw it could lose).
    let session: string | undefined;
    const stay = (): Tier | null => ((session = req.codec.session(req.request)) === undefined ? null : sessionTier(app.affinity, req.route, session));
    const { tiers, allDown, affinity } = planTiers(req.route, app.gate, app.random, stay);
    if (affinity) req.affinity = true;
    this.plan = tiers;
    this.allDown = allDown;
    this.session = session;
    this.deadlineAt = req.arrivedAt + req.route.deadline_ms;
  }

  /** Takes plan index `t` as opened; false when it was already (a hedge opened it ahead). */
  open(t: number): boolean {
    if (t < this.opened) return false;
    this.opened = t + 1;
    return true;
  }

  /** The first plan index after `after` not opened yet. */
  nextUnopened(after: number): number {
    return Math.max(after + 1, this.opened);
  }

  /** A tier passed over (refused to open): why, for the answer when no tier answers. */
  refused(tier: Tier, refusal: Exclude<Opening, { open: true }>): void {
    this.notes.refused(tier, refusal);
  }

  /** `tier` answered: the session's next turn stays with it. */
  answered(tier: Tier): void {
    answeredBy(this.app.affinity, this.req.route, this.session, tier);
  }

  /** Whether plan index `t` is the last tier the request tries, for a call that reads tool calls written as text. */
  lastTierOf(t: number, call: UpstreamCall): LastTier | undefined {
    return call.readsToolText ? new LastTier(this.req, this.plan, t) : undefined;
  }

  /** The tier after `tier` in the plan is tried: the failover is said, and the request's fallback watch told. */
  failedOver(tier: Tier, reason: AttemptReason): void {
    this.app.telemetry.emit({ type: 'failover', id: this.req.id, route: this.req.route.name, fromTier: tier.name, reason });
    this.req.fellBack();
  }
}
