import type { Config, Tier } from '../config/schema.js';
import { allTiers } from '../config/all-tiers.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import type { WeightChanged, WeightLayers } from '../telemetry/events.js';
import { tierKey } from '../health/health-view.js';
import { type Clock, systemClock } from '../util/clock.js';

interface AdminOverride {
  weight: number;
  expiresAt: number | null;
  cancelExpiry: (() => void) | null;
}

interface Rollback {
  reason: string;
  at: number;
  cancelRestore: (() => void) | null;
}

interface TierControl {
  configured: number;
  admin: AdminOverride | null;
  /** Firing alerts that name this tier: alert key → alert name. */
  alerts: Map<string, string>;
  rollback: Rollback | null;
}

export interface WeightView {
  configured: number;
  effective: number;
  override: { weight: number; expires_in_s: number | null } | null;
  alerts: string[];
  rollback: { reason: string; since: string } | null;
}

/**
 * Runtime weights on top of the tier file: an admin override (optionally with a TTL; 0 is the
 * kill switch), firing alerts and automated rollbacks (both force 0). Every change leaves as a
 * `weight` telemetry event.
 */
export class WeightControl {
  private tiers = new Map<string, TierControl>();

  constructor(private readonly bus: TelemetryBus, config: Config, private readonly clock: Clock = systemClock) {
    this.configure(config, false);
  }

  weight(tier: Tier): number {
    const control = this.tiers.get(tierKey(tier.route, tier.name));
    return control ? effective(control) : tier.weight;
  }

  view(route: string, tier: string): WeightView | null {
    const control = this.tiers.get(tierKey(route, tier));
    if (!control) return null;
    const now = this.clock.now();
    return {
      configured: control.configured,
      effective: effective(control),
      override: control.admin ? { weight: control.admin.weight, expires_in_s: control.admin.expiresAt === null ? null : Math.max(0, Math.round((control.admin.expiresAt - now) / 1000)) } : null,
      alerts: [...control.alerts.values()],
      rollback: control.rollback ? { reason: control.rollback.reason, since: new Date(control.rollback.at).toISOString() } : null,
    };
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
      const control: TierControl = existing ?? { configured: tier.weight, admin: null, alerts: new Map(), rollback: null };
      control.configured = tier.weight;
      if (isReload && control.rollback) clearRollback(control);
      next.set(k, control);
      if (isReload) this.emit(tier.route, tier.name, control, 'reload');
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
    const override: AdminOverride = { weight, expiresAt, cancelExpiry: null };
    if (ttlS !== undefined) {
      override.cancelExpiry = this.clock.after(ttlS * 1000, () => {
        if (control.admin !== override) return;
        control.admin = null;
        this.emit(route, tier, control, 'expired');
      });
    }
    control.admin = override;
    this.emit(route, tier, control, 'admin', ttlS === undefined ? undefined : `for ${ttlS} s`, expiresAt ?? undefined);
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
    return true;
  }

  fireAlert(route: string, tier: string, alertKey: string, alertName: string): boolean {
    const control = this.tiers.get(tierKey(route, tier));
    if (!control) return false;
    control.alerts.set(alertKey, alertName);
    this.emit(route, tier, control, 'alert', `alert ${alertName} firing`);
    return true;
  }

  resolveAlert(route: string, tier: string, alertKey: string): boolean {
    const control = this.tiers.get(tierKey(route, tier));
    if (!control) return false;
    const name = control.alerts.get(alertKey);
    if (name === undefined) return true;
    control.alerts.delete(alertKey);
    this.emit(route, tier, control, 'alert', `alert ${name} resolved`);
    return true;
  }

  /** Automated rollback: weight 0 until DELETE, a reload, or `restoreAfterS`. */
  rollBack(route: string, tier: string, reason: string, restoreAfterS?: number): void {
    const control = this.tiers.get(tierKey(route, tier));
    if (!control || control.rollback) return;
    const rollback: Rollback = { reason, at: this.clock.now(), cancelRestore: null };
    if (restoreAfterS !== undefined) {
      rollback.cancelRestore = this.clock.after(restoreAfterS * 1000, () => {
        if (control.rollback !== rollback) return;
        control.rollback = null;
        this.emit(route, tier, control, 'expired', 'rollback restored');
      });
    }
    control.rollback = rollback;
    this.emit(route, tier, control, 'rollback', reason);
  }

  isRolledBack(route: string, tier: string): boolean {
    return this.tiers.get(tierKey(route, tier))?.rollback != null;
  }

  private emit(route: string, tier: string, control: TierControl, source: WeightChanged['source'], reason?: string, expiresAt?: number): void {
    this.bus.emit({
      type: 'weight', route, tier, weight: effective(control), configured: control.configured, source,
      ...(reason ? { reason } : {}), ...(expiresAt !== undefined ? { expiresAt } : {}),
      layers: layersOf(control),
    });
  }
}

function layersOf(control: TierControl): WeightLayers {
  return {
    admin: control.admin ? { weight: control.admin.weight, expiresAt: control.admin.expiresAt } : null,
    alerts: [...control.alerts.values()],
    rollback: control.rollback?.reason ?? null,
  };
}

function effective(control: TierControl): number {
  if (control.alerts.size > 0 || control.rollback) return 0;
  return control.admin ? control.admin.weight : control.configured;
}

function clearRollback(control: TierControl): void {
  control.rollback?.cancelRestore?.();
  control.rollback = null;
}
