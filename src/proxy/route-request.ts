import { openTier } from './attempt-start.js';
import { Hedging } from './hedging/hedged-flight.js';
import type { RoutingRequest, RoutingView } from './routing.js';
import { tryTier } from './tier-tries.js';
import type { RoutingOutcome } from './routing-outcome.js';
import { Walk } from './walk.js';

/**
 * The routing loop: the plan's tiers in order, each opened (can it carry the request, does it
 * fit, llm-route's own limits and budgets) and tried (tier-tries.ts: its retries), failing over
 * to the next on the tier's faults. It returns at the first commit; after that nothing here runs
 * again. Hedging (hedging/) and mid-stream resume (resume/) are behaviours around a flight, not
 * branches of this loop: a hedge that outlives the attempt it raced is handed to its tier here
 * as that tier's first try.
 */
export async function routeRequest(req: RoutingRequest, app: RoutingView): Promise<RoutingOutcome> {
  const walk = new Walk(req, app);
  const hedging = Hedging.for(walk);
  for (let t = 0; t < walk.plan.length; t++) {
    const tier = walk.plan[t];
    const handed = hedging?.takeHanded(t) ?? null;
    if (!handed && !walk.open(t)) continue; // a hedge opened it, and it is done
    // Answers at once unless a tokenizer or a limit must be waited for: no promise per tier otherwise.
    const opening = handed ? { open: true as const, call: handed.call } : openTier(walk, tier);
    const opened = opening instanceof Promise ? await opening : opening;
    if (!opened.open) {
      if (opened.why === 'aborted') return { kind: 'aborted', attempts: req.log.records };
      walk.refused(tier, opened);
      continue;
    }
    const end = await tryTier(walk, t, opened.call, handed, hedging);
    if ('outcome' in end) return end.outcome;
    // The failed attempt was cancelled as it failed: undici's abort destroys its socket at once
    // (a request still waiting for a connection is aborted before a byte of it is written), so
    // the next tier never runs while this one still can: an idempotent request executes once.
    if (end.next && t < walk.plan.length - 1) walk.failedOver(tier, end.next.reason);
  }
  return walk.notes.answer(walk.plan.length, req.log.records, req.prompt);
}
