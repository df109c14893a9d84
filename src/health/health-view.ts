import type { Tier } from '../config/schema.js';

/** Map key of a tier: route and tier names cannot contain NUL. */
export function tierKey(route: string, tier: string): string {
  return `${route}\u0000${tier}`;
}

export type TierState = 'healthy' | 'degraded' | 'down';

/**
 * The one seam through which the planner and the routing loop consult the control plane:
 * whether a tier may take a request now, with what weight, and whether it is cold.
 */
export interface TierGate {
  /** The tier's weight now: a runtime override when one is set, else the configured weight. */
  weight(tier: Tier): number;
  /** May the planner include the tier? false while its circuit is open and cooling down, or its half-open trial is out. */
  allows(tier: Tier): boolean;
  /**
   * Called just before an attempt on the tier: claims the half-open trial of a cooled-down
   * circuit (false if another request got it first). Claiming here, not at planning, means a
   * tier that a request never reaches is not held as "trial in progress".
   */
  claim(tier: Tier): boolean;
  /** No success for `cold_after_ms` (or never): the next request gets `cold_ttft_ms`. */
  isCold(tier: Tier): boolean;
}
