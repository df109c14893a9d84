import type { WeightLayers } from '../../telemetry/events.js';
import { formatDuration } from '../../util/format.js';

/**
 * A tier's weight label from the layers its last `weight` event carried: the event says what
 * holds the weight (alerts, a rollback, an admin override), so nothing is read from its words.
 */
export type { WeightLayers } from '../../telemetry/events.js';

export const NO_LAYERS: WeightLayers = { admin: null, alerts: [], rollback: null };

/** `100`, `0 (killed)`, `25 (admin, 3m left)`, `0 (rolled back)`, `0 (alert)`. */
export function weightText(weight: number, layers: WeightLayers, now: number): string {
  if (layers.rollback !== null) return `${weight} (rolled back)`;
  if (layers.alerts.length > 0) return `${weight} (alert)`;
  if (!layers.admin) return String(weight);
  const name = weight === 0 ? 'killed' : 'admin';
  const left = layers.admin.expiresAt === null ? '' : `, ${timeLeft(layers.admin.expiresAt - now)}`;
  return `${weight} (${name}${left})`;
}

function timeLeft(ms: number): string {
  if (ms <= 0) return 'expiring';
  // Whole minutes read calmly; seconds only in the last minute.
  return ms >= 60_000 ? `${Math.ceil(ms / 60_000)}m left` : `${formatDuration(ms)} left`;
}
