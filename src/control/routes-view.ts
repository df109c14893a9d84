import { HEALTH_WINDOW_MS } from '../health/health-board.js';
import type { AppContext } from './app-context.js';

/** GET /admin/routes: every route's tiers with weights, overrides, health and recent TTFT. */
export function routesView(app: AppContext): Record<string, unknown> {
  const routes: Record<string, unknown> = {};
  for (const route of app.config.routes.values()) {
    routes[route.name] = {
      deadline_ms: route.deadline_ms,
      tiers: route.tiers.map((tier) => {
        const health = app.health.view(route.name, tier.name);
        const weight = app.weights.view(route.name, tier.name);
        const ttft = health?.window.ttft ?? null;
        return {
          name: tier.name,
          provider: tier.provider.name,
          model: tier.model,
          weight: weight?.effective ?? tier.weight,
          configured_weight: tier.weight,
          override: weight?.override ?? null,
          alerts: weight?.alerts ?? [],
          rollback: weight?.rollback ?? null,
          limits: tier.provider.limits ? app.state.limitsView(tier.provider.name, tier.provider.limits) : null,
          state: health?.state ?? 'healthy',
          consecutive_failures: health?.consecutive_failures ?? 0,
          retry_at: health?.retry_at ?? null,
          last_error: health?.last_error ?? null,
          recent: health
            ? {
                window_s: HEALTH_WINDOW_MS / 1000,
                requests: health.window.requests,
                errors: health.window.errors,
                ttft_ms: ttft ? { p50: Math.round(ttft.p50), p95: Math.round(ttft.p95), p99: Math.round(ttft.p99), samples: ttft.samples } : null,
              }
            : null,
        };
      }),
    };
  }
  return { file: app.config.file, state: { backend: app.state.kind, up: app.state.up }, routes };
}
