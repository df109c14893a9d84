import type { Config, Tier } from '../config/schema.js';
import { allTiers } from '../config/all-tiers.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import type { WeightChanged } from '../telemetry/events.js';
import { tierKey } from '../health/health-view.js';
import { type Clock, systemClock } from '../util/clock.js';
import type { SharedLayers, SharedWeights } from '../state/shared-weights.js';
import {
  type AdminOverride,
  clearRollback,
  effective,
  layersOf,
  type Rollback,
  sharedLayersOf,
  type TierControl,
  viewOf,
  type WeightView,
} from './weight-layers.js';

/**
 * Runtime weights on top of the tier file: an admin override (optionally with a TTL; 0 is the
 * kill switch), firing alerts and automated rollbacks (both force 0). Every change leaves as a
 * `weight` telemetry event.
 */
export class WeightControl implements SharedWeights {
  private tiers = new Map<string, TierControl>();
  /** Set by a shared state backend: local changes go out to the other instances. */
  onLocalChange: SharedWeights['onLocalChange'] = null;

  constructor(
    private readonly bus: TelemetryBus,
    config: Config,
    private readonly clock: Clock = systemClock,
  ) {
    this.configure(config, false);
  }

  weight(tier: Tier): number {
    const control = this.tiers.get(tierKey(tier.route, tier.name));
    return control ? effective(control) : tier.weight;
  }

  view(route: string, tier: string): WeightView | null {
    const control = this.tiers.get(tierKey(route, tier));
    if (!control) return null;
    return viewOf(control, this.clock.now());
  }

  /**
   * Takes a (re)loaded config. Admin overrides and firing alerts survive for tiers that still
   * exist; a reload clears rollbacks (the operator has acted).
   */
  configure(config: Config, isReload = true): void {
    const next = new Map<string, TierControl>();
    for (const tier of allTiers(config)) {
      const k = tierKey(tier.route, tier.name);
      const existing = this.tiers.get(k);
      const control: TierControl = existing ?? { configured: tier.weight, admin: null, alerts: new Map(), rollback: null, updatedAt: 0 };
      control.configured = tier.weight;
      const clearedRollback = isReload && control.rollback !== null;
      if (clearedRollback) clearRollback(control);
      next.set(k, control);
      if (isReload) this.emit(tier.route, tier.name, control, 'reload');
      if (clearedRollback) this.shareChange(tier.route, tier.name, control, 'reload');
    }
    for (const [k, control] of this.tiers) {
      if (!next.has(k)) {
        control.admin?.cancelExpiry?.();
        if (control.rollback) clearRollback(control);
      }
    }
    this.tiers = next;
  }

  /** An admin override; `ttlS` makes it expire by itself. */
  setOverride(route: string, tier: string, weight: number, ttlS?: number): boolean {
    const control = this.tiers.get(tierKey(route, tier));
    if (!control) return false;
    control.admin?.cancelExpiry?.();
    const expiresAt = ttlS === undefined ? null : this.clock.now() + ttlS * 1000;
    control.admin = this.adminOverride(route, tier, control, weight, expiresAt);
    this.emit(route, tier, control, 'admin', ttlS === undefined ? undefined : `for ${ttlS} s`, expiresAt ?? undefined);
    this.shareChange(route, tier, control, 'admin', ttlS === undefined ? undefined : `for ${ttlS} s`);
    return true;
  }

  /** An override that lapses by itself at `expiresAt` (absolute, so every instance lapses it at once). */
  private adminOverride(route: string, tier: string, control: TierControl, weight: number, expiresAt: number | null): AdminOverride {
    const override: AdminOverride = { weight, expiresAt, cancelExpiry: null };
    if (expiresAt !== null) {
      override.cancelExpiry = this.clock.after(Math.max(0, expiresAt - this.clock.now()), () => {
        if (control.admin !== override) return;
        control.admin = null;
        this.emit(route, tier, control, 'expired');
      });
    }
    return override;
  }

  /**
   * Clears the admin override only (the UI's `k` lifting its kill switch): a rollback or a
   * firing alert keeps the tier at 0, as its own reason says.
   */
  clearOverride(route: string, tier: string): boolean {
    const control = this.tiers.get(tierKey(route, tier));
    if (!control) return false;
    control.admin?.cancelExpiry?.();
    control.admin = null;
    this.emit(route, tier, control, 'cleared');
    this.shareChange(route, tier, control, 'cleared');
    return true;
  }

  /** Clears the admin override and any rollback. */
  clear(route: string, tier: string): boolean {
    const control = this.tiers.get(tierKey(route, tier));
    if (!control) return false;
    control.admin?.cancelExpiry?.();
    control.admin = null;
    if (control.rollback) clearRollback(control);
    this.emit(route, tier, control, 'cleared');
    this.shareChange(route, tier, control, 'cleared');
    return true;
  }

  fireAlert(route: string, tier: string, alertKey: string, alertName: string): boolean {
    const control = this.tiers.get(tierKey(route, tier));
    if (!control) return false;
    control.alerts.set(alertKey, alertName);
    this.emit(route, tier, control, 'alert', `alert ${alertName} firing`);
    this.shareChange(route, tier, control, 'alert', `alert ${alertName} firing`);
    return true;
  }

  resolveAlert(route: string, tier: string, alertKey: string): boolean {
    const control = this.tiers.get(tierKey(route, tier));
    if (!control) return false;
    const name = control.alerts.get(alertKey);
    if (name === undefined) return true;
    control.alerts.delete(alertKey);
    this.emit(route, tier, control, 'alert', `alert ${name} resolved`);
    this.shareChange(route, tier, control, 'alert', `alert ${name} resolved`);
    return true;
  }

  /** Automated rollback: weight 0 until DELETE, a reload, or `restoreAfterS`. */
  rollBack(route: string, tier: string, reason: string, restoreAfterS?: number): void {
    const control = this.tiers.get(tierKey(route, tier));
    if (!control || control.rollback) return;
    const at = this.clock.now();
    control.rollback = this.rollbackOf(route, tier, control, reason, at, restoreAfterS === undefined ? null : at + restoreAfterS * 1000);
    this.emit(route, tier, control, 'rollback', reason);
    this.shareChange(route, tier, control, 'rollback', reason);
  }

  private rollbackOf(route: string, tier: string, control: TierControl, reason: string, at: number, restoreAt: number | null): Rollback {
    const rollback: Rollback = { reason, at, restoreAt, cancelRestore: null };
    if (restoreAt !== null) {
      rollback.cancelRestore = this.clock.after(Math.max(0, restoreAt - this.clock.now()), () => {
        if (control.rollback !== rollback) return;
        control.rollback = null;
        this.emit(route, tier, control, 'expired', 'rollback restored');
      });
    }
    return rollback;
  }

  /** Every tier this instance knows, as [route, tier]. */
  tierNames(): Array<[string, string]> {
    return [...this.tiers.keys()].map((k) => k.split('\u0000') as [string, string]);
  }

  /** A tier's layers as plain data; null for a tier this instance does not have. */
  sharedLayers(route: string, tier: string): SharedLayers | null {
    const control = this.tiers.get(tierKey(route, tier));
    if (!control) return null;
    return sharedLayersOf(control);
  }

  /**
   * Another instance's change: its layers replace this tier's when they are newer (a TTL that
   * has already lapsed is dropped). Returns whether they were applied.
   */
  applyShared(route: string, tier: string, layers: SharedLayers, source: WeightChanged['source'], reason?: string): boolean {
    const control = this.tiers.get(tierKey(route, tier));
    if (!control || layers.updatedAt <= control.updatedAt) return false;
    const now = this.clock.now();
    control.admin?.cancelExpiry?.();
    if (control.rollback) clearRollback(control);
    const admin = layers.admin && (layers.admin.expiresAt === null || layers.admin.expiresAt > now) ? layers.admin : null;
    control.admin = admin ? this.adminOverride(route, tier, control, admin.weight, admin.expiresAt) : null;
    control.alerts = new Map(layers.alerts);
    const rollback = layers.rollback && (layers.rollback.restoreAt === null || layers.rollback.restoreAt > now) ? layers.rollback : null;
    control.rollback = rollback ? this.rollbackOf(route, tier, control, rollback.reason, rollback.at, rollback.restoreAt) : null;
    control.updatedAt = layers.updatedAt;
    this.emit(route, tier, control, source, reason, control.admin?.expiresAt ?? undefined);
    return true;
  }

  private shareChange(route: string, tier: string, control: TierControl, source: WeightChanged['source'], reason?: string): void {
    control.updatedAt = Math.max(this.clock.now(), control.updatedAt + 1);
    if (!this.onLocalChange) return;
    const layers = this.sharedLayers(route, tier);
    if (layers) this.onLocalChange(route, tier, layers, source, reason);
  }

  isRolledBack(route: string, tier: string): boolean {
    return this.tiers.get(tierKey(route, tier))?.rollback != null;
  }

  private emit(route: string, tier: string, control: TierControl, source: WeightChanged['source'], reason?: string, expiresAt?: number): void {
    this.bus.emit({
      type: 'weight',
      route,
      tier,
      weight: effective(control),
      configured: control.configured,
      source,
      ...(reason ? { reason } : {}),
      ...(expiresAt !== undefined ? { expiresAt } : {}),
      layers: layersOf(control),
    });
  }
}
