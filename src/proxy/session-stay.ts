import type { Route, Tier } from '../config/schema.js';
import type { SessionAffinity } from '../state/session-affinity.js';

// A session's stay on one tier (see plan.ts and state/session-affinity.ts): where its last turn
// was answered, looked up when a weighted draw could move it; the answering tier, kept after.

/** The tier that answered the session's last turn on this route, when one is remembered and still in the route. */
export function sessionTier(sessions: SessionAffinity, route: Route, session: string): Tier | null {
  const name = sessions.tierOf(route.name, session);
  return name === undefined ? null : (route.tiers.find((tier) => tier.name === name) ?? null);
}

/** `tier` answered this turn of `session` (undefined: the plan never asked for one): its next turn stays with it. */
export function answeredBy(sessions: SessionAffinity, route: Route, session: string | undefined, tier: Tier): void {
  if (session !== undefined) sessions.remember(route.name, session, tier.name);
}
