import type { WeightChanged } from '../telemetry/events.js';

/**
 * A tier's runtime layers as plain data, for sharing with other instances (state/redis-weights.ts).
 * Times are absolute epoch ms, so every instance lapses a TTL at the same moment.
 */
export interface SharedLayers {
  admin: { weight: number; expiresAt: number | null } | null;
  alerts: Array<[key: string, name: string]>;
  rollback: { reason: string; at: number; restoreAt: number | null } | null;
  updatedAt: number;
}

/** Told of every change made on this instance (not of changes applied from other instances, nor of TTLs lapsing). */
export type LocalWeightChange = (route: string, tier: string, layers: SharedLayers, source: WeightChanged['source'], reason?: string) => void;

/**
 * What the state seam needs of this instance's runtime weights (control/weights.ts implements
 * it): to hear of local changes, and to apply other instances' changes.
 */
export interface SharedWeights {
  /** Set by a shared state backend: local changes go out to the other instances. */
  onLocalChange: LocalWeightChange | null;
  /** Another instance's change: applied when newer than what this instance has; returns whether it was. */
  applyShared(route: string, tier: string, layers: SharedLayers, source: WeightChanged['source'], reason?: string): boolean;
}
