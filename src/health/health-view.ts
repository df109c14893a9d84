/** The one seam through which the planner consults tier health. */
export type TierState = 'healthy' | 'degraded' | 'down';

export interface HealthView {
  state(route: string, tier: string): TierState;
}
