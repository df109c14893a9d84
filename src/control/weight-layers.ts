import type { SharedLayers } from '../state/shared-weights.js';
import type { WeightLayers } from '../telemetry/events.js';

// One tier's runtime weight, as layers on the tier file's weight: an admin override (with its
// TTL), firing alerts and a rollback (both force 0). What they make (the effective weight, the
// admin API's view, the telemetry event's layers, the plain data other instances get) is read
// here; weights.ts changes them.

export interface AdminOverride {
  weight: number;
  expiresAt: number | null;
  cancelExpiry: (() => void) | null;
}

export interface Rollback {
  reason: string;
  at: number;
  /** Epoch ms it restores itself; null: until DELETE or a reload. */
  restoreAt: number | null;
  cancelRestore: (() => void) | null;
}

export interface TierControl {
  configured: number;
  admin: AdminOverride | null;
  /** Firing alerts that name this tier: alert key → alert name. */
  alerts: Map<string, string>;
  rollback: Rollback | null;
  /** Epoch ms of the last change of the layers (0: never changed): the newer change wins between instances. */
  updatedAt: number;
}

export interface WeightView {
  configured: number;
  effective: number;
  override: { weight: number; expires_in_s: number | null } | null;
  alerts: string[];
  rollback: { reason: string; since: string } | null;
}

export function layersOf(control: TierControl): WeightLayers {
  return {
    admin: control.admin ? { weight: control.admin.weight, expiresAt: control.admin.expiresAt } : null,
    alerts: [...control.alerts.values()],
    rollback: control.rollback?.reason ?? null,
  };
}

export function effective(control: TierControl): number {
  if (control.alerts.size > 0 || control.rollback) return 0;
  return control.admin ? control.admin.weight : control.configured;
}

export function clearRollback(control: TierControl): void {
  control.rollback?.cancelRestore?.();
  control.rollback = null;
}

/** What the admin API shows of a tier's weight at `now`. */
export function viewOf(control: TierControl, now: number): WeightView {
  return {
    configured: control.configured,
    effective: effective(control),
    override: control.admin
      ? {
          weight: control.admin.weight,
          expires_in_s: control.admin.expiresAt === null ? null : Math.max(0, Math.round((control.admin.expiresAt - now) / 1000)),
        }
      : null,
    alerts: [...control.alerts.values()],
    rollback: control.rollback ? { reason: control.rollback.reason, since: new Date(control.rollback.at).toISOString() } : null,
  };
}

/** A tier's layers as plain data, for the other instances (state's SharedWeights). */
export function sharedLayersOf(control: TierControl): SharedLayers {
  return {
    admin: control.admin ? { weight: control.admin.weight, expiresAt: control.admin.expiresAt } : null,
    alerts: [...control.alerts.entries()],
    rollback: control.rollback ? { reason: control.rollback.reason, at: control.rollback.at, restoreAt: control.rollback.restoreAt } : null,
    updatedAt: control.updatedAt,
  };
}
