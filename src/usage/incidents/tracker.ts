import { nodeCrypto } from '../../util/node-crypto.js';
import type { TelemetryEvent } from '../../telemetry/events.js';
import type { IncidentOpen } from '../store.js';

export type IncidentKind = IncidentOpen['kind'];

export interface IncidentSink {
  open(incident: IncidentOpen): void;
  close(key: string, closedAt: number, closedBy: string): void;
}

/** A tier down for longer than this is an incident (docs/usage.md). */
export const DOWN_AFTER_MS = 30_000;

/**
 * Opens and closes incidents from control-plane events: a `rollback`; an alert's kill switch
 * (a `weight` event from an alert that sets 0); a tier `down` for over 30 s (opened at the
 * moment it went down). Each closes at its restore: the tier's weight back above 0 (a
 * clear or a reload also ends a rollback), or the tier no longer down.
 */
export class IncidentTracker {
  private readonly openKeys = new Map<string, string>();
  private readonly down = new Map<string, { at: number; reason: string; timer: NodeJS.Timeout }>();

  constructor(
    private readonly sink: IncidentSink,
    private readonly now: () => number = Date.now,
    private readonly downAfterMs = DOWN_AFTER_MS,
  ) {}

  onEvent(event: TelemetryEvent): void {
    switch (event.type) {
      case 'rollback':
        this.open(event.route, event.tier, 'rollback', this.now(), {
          reason: event.reason,
          threshold: event.threshold,
          observed: event.observed,
          requests: event.requests,
          window_s: event.windowS,
        });
        return;
      case 'weight':
        if (event.source === 'alert' && event.weight === 0) this.open(event.route, event.tier, 'alert', this.now(), { alert: event.reason ?? 'alert firing' });
        if (event.weight > 0) {
          this.close(event.route, event.tier, 'rollback', 'restore');
          this.close(event.route, event.tier, 'alert', 'restore');
        } else if (event.source === 'cleared' || event.source === 'reload') {
          this.close(event.route, event.tier, 'rollback', event.source);
        }
        return;
      case 'tier_state':
        return this.onTierState(event.route, event.tier, event.to, event.reason);
      default:
        return;
    }
  }

  /** Closes every open incident (the proxy is stopping: its weights and states go with it). */
  closeAll(closedBy: string): void {
    const at = this.now();
    for (const key of this.openKeys.values()) this.sink.close(key, at, closedBy);
    this.openKeys.clear();
  }

  stop(): void {
    for (const pending of this.down.values()) clearTimeout(pending.timer);
    this.down.clear();
  }

  private onTierState(route: string, tier: string, to: string, reason: string): void {
    const k = tierKey(route, tier);
    if (to === 'down') {
      if (this.down.has(k)) return;
      const at = this.now();
      const timer = setTimeout(() => this.open(route, tier, 'down', at, { reason }), this.downAfterMs);
      timer.unref();
      this.down.set(k, { at, reason, timer });
      return;
    }
    const pending = this.down.get(k);
    if (pending) clearTimeout(pending.timer);
    this.down.delete(k);
    this.close(route, tier, 'down', 'restore');
  }

  private open(route: string, tier: string, kind: IncidentKind, openedAt: number, trigger: Record<string, unknown>): void {
    const k = incidentKey(route, tier, kind);
    if (this.openKeys.has(k)) return;
    const key = nodeCrypto().randomUUID();
    this.openKeys.set(k, key);
    this.sink.open({ key, route, tier, kind, openedAt, trigger });
  }

  private close(route: string, tier: string, kind: IncidentKind, closedBy: string): void {
    const k = incidentKey(route, tier, kind);
    const key = this.openKeys.get(k);
    if (key === undefined) return;
    this.openKeys.delete(k);
    this.sink.close(key, this.now(), closedBy);
  }
}

function tierKey(route: string, tier: string): string {
  return `${route}\u0000${tier}`;
}

function incidentKey(route: string, tier: string, kind: IncidentKind): string {
  return `${route}\u0000${tier}\u0000${kind}`;
}
