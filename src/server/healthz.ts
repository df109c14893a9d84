import type { AppContext } from '../control/app-context.js';

/**
 * GET /healthz: per-tier state and weight; names only, never URLs or keys. `status`: `ok`
 * while some tier is healthy, `degraded` when none is but some is not down, `down` when all are.
 */
export function healthz(app: AppContext): Record<string, unknown> {
  const routes: Record<string, unknown> = {};
  let anyUp = false;
  let anyHealthy = false;
  for (const route of app.config.routes.values()) {
    routes[route.name] = {
      tiers: route.tiers.map((tier) => {
        const health = app.health.view(route.name, tier.name);
        const state = health?.state ?? 'healthy';
        if (state !== 'down') anyUp = true;
        if (state === 'healthy') anyHealthy = true;
        return {
          name: tier.name,
          provider: tier.provider.name,
          model: tier.model,
          state,
          weight: app.gate.weight(tier),
          consecutive_failures: health?.consecutive_failures ?? 0,
          retry_at: health?.retry_at ?? null,
          attempts: health?.attempts ?? 0,
          failures: health?.failures ?? 0,
        };
      }),
    };
  }
  const status = anyHealthy ? 'ok' : anyUp ? 'degraded' : 'down';
  return { status, uptime_s: Math.round((Date.now() - app.startedAt) / 1000), routes };
}
