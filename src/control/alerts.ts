import type { AppContext } from './app-context.js';

interface AlertResult {
  applied: Array<{ route: string; tier: string; status: string; alert: string }>;
  ignored: Array<{ alert: string; reason: string }>;
}

/**
 * An Alertmanager webhook (payload version 4): a firing alert whose labels name `route` and
 * `tier` (or `model_tier`) holds that tier's weight at 0 until the same alert resolves.
 * Alerts that name no known tier are reported back as ignored, never an error, so
 * Alertmanager does not retry them forever.
 */
export function applyAlerts(payload: unknown, app: AppContext): { ok: true; result: AlertResult } | { ok: false; message: string } {
  if (typeof payload !== 'object' || payload === null || !Array.isArray((payload as { alerts?: unknown }).alerts)) {
    return { ok: false, message: 'expected an Alertmanager webhook payload (version 4) with an "alerts" array' };
  }
  const { version, alerts } = payload as { version?: unknown; alerts: unknown[] };
  if (version !== undefined && version !== '4') return { ok: false, message: `unsupported Alertmanager payload version "${String(version)}": expected "4"` };
  const result: AlertResult = { applied: [], ignored: [] };
  for (const alert of alerts) {
    if (typeof alert !== 'object' || alert === null) {
      result.ignored.push({ alert: '?', reason: 'not an object' });
      continue;
    }
    const { status, labels, fingerprint } = alert as { status?: unknown; labels?: Record<string, unknown>; fingerprint?: unknown };
    const name = typeof labels?.alertname === 'string' ? labels.alertname : 'unnamed';
    const route = labels?.route;
    const tier = labels?.tier ?? labels?.model_tier;
    if (typeof route !== 'string' || typeof tier !== 'string') {
      result.ignored.push({ alert: name, reason: 'labels name no "route" and "tier" (or "model_tier")' });
      continue;
    }
    if (status !== 'firing' && status !== 'resolved') {
      result.ignored.push({ alert: name, reason: `status "${String(status)}" is neither firing nor resolved` });
      continue;
    }
    // Alertmanager's fingerprint identifies the alert across fire and resolve; fall back to its labels.
    const key = typeof fingerprint === 'string' && fingerprint !== '' ? fingerprint : JSON.stringify(labels);
    const applied = status === 'firing' ? app.weights.fireAlert(route, tier, key, name) : app.weights.resolveAlert(route, tier, key);
    if (applied) result.applied.push({ route, tier, status, alert: name });
    else result.ignored.push({ alert: name, reason: `no tier "${tier}" in route "${route}"` });
  }
  return { ok: true, result };
}
