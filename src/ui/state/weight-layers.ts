import type { WeightChanged } from '../../telemetry/events.js';
import { formatDuration } from '../format.js';

/**
 * What stands between a tier's configured weight and the one in force, as far as weight
 * events tell: a firing alert or a rollback forces 0; else an admin override (0 is the kill
 * switch) sets it. Each event carries the weight in force, so the number is always exact;
 * these layers only decide the label.
 */
export interface WeightLayers {
  admin: { weight: number; expiresAt?: number } | null;
  alertFiring: boolean;
  rolledBack: boolean;
}

export const NO_LAYERS: WeightLayers = { admin: null, alertFiring: false, rolledBack: false };

export function layersAfter(event: WeightChanged, before: WeightLayers, at: number): WeightLayers {
  const layers: WeightLayers = { ...before };
  switch (event.source) {
    case 'admin': {
      layers.admin = { weight: event.weight };
      const expiresAt = expiryOf(event);
      if (expiresAt !== undefined) layers.admin.expiresAt = expiresAt;
      break;
    }
    case 'alert':
      // "alert X firing" / "alert X resolved"; another alert may still hold the weight at 0.
      layers.alertFiring = event.reason?.endsWith('resolved')
        ? event.weight === 0 && !layers.rolledBack && layers.admin?.weight !== 0
        : event.weight === 0;
      break;
    case 'rollback':
      layers.rolledBack = true;
      break;
    case 'expired':
      if (event.reason?.startsWith('rollback')) layers.rolledBack = false;
      else layers.admin = null;
      break;
    case 'cleared':
      layers.admin = null;
      layers.rolledBack = false;
      break;
    case 'reload':
      layers.rolledBack = false; // a reload clears rollbacks: the operator has acted
      break;
  }
  // Only an admin override shows through to the weight in force: then it is its weight.
  if (layers.admin && !layers.alertFiring && !layers.rolledBack) layers.admin = { ...layers.admin, weight: event.weight };
  return layers;
}

/** When an admin override lapses: the event carries it for overrides with a TTL. */
function expiryOf(event: WeightChanged): number | undefined {
  return event.expiresAt;
}

/** `100`, `0 (killed)`, `25 (admin, 3m left)`, `0 (rolled back)`, `0 (alert)`. */
export function weightText(weight: number, layers: WeightLayers, now: number): string {
  if (layers.rolledBack) return `${weight} (rolled back)`;
  if (layers.alertFiring) return `${weight} (alert)`;
  if (!layers.admin) return String(weight);
  const name = weight === 0 ? 'killed' : 'admin';
  const left = layers.admin.expiresAt === undefined ? '' : `, ${timeLeft(layers.admin.expiresAt - now)}`;
  return `${weight} (${name}${left})`;
}

function timeLeft(ms: number): string {
  if (ms <= 0) return 'expiring';
  // Whole minutes read calmly; seconds only in the last minute.
  return ms >= 60_000 ? `${Math.ceil(ms / 60_000)}m left` : `${formatDuration(ms)} left`;
}
