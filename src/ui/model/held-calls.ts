import type { TelemetryEvent } from '../../telemetry/events.js';
import type { HeldCallView } from '../dashboard-view.js';

/** A tool call written as text being held, as its last hold event told it. */
interface HeldCall {
  route: string;
  tier: string;
  chars: number;
  /** When its hold began (by the hold's own clock), and when it last grew (the dashboard's). */
  since: number;
  grewAt: number;
}

/**
 * Tool calls written as text held now, by request id (README "Agents on local models"): each
 * hold event (its start, about once a second while it grows, its end) updates one; the request
 * committing or ending, or its attempt failing over, lets it go.
 */
export class HeldCalls {
  private readonly calls = new Map<string, HeldCall>();

  /** The events that begin, grow and end a held call, or let it go. */
  apply(event: TelemetryEvent, at: number): void {
    if (event.type === 'tool_text_hold') this.note(event.id, event.route, event.tier, event.chars, event.ms, at);
    else if (event.type === 'attempt_end') this.drop(event.id, event.tier);
    else if (event.type === 'commit' || event.type === 'request_end') this.drop(event.id);
  }

  /** A hold event: its call began, grew, or ended (`chars` 0). */
  private note(id: string, route: string, tier: string, chars: number, ms: number, at: number): void {
    if (chars === 0) {
      this.calls.delete(id);
      return;
    }
    const call = this.calls.get(id);
    if (call && call.tier === tier) {
      if (chars !== call.chars) call.grewAt = at;
      call.chars = chars;
      call.since = at - ms; // the hold's own clock (the dashboard may have come in after it began)
      return;
    }
    this.calls.set(id, { route, tier, chars, since: at - ms, grewAt: at });
  }

  /** The request's call goes (it committed or ended; with `tier`, only if that tier's attempt ended). */
  private drop(id: string, tier?: string): void {
    if (tier === undefined || this.calls.get(id)?.tier === tier) this.calls.delete(id);
  }

  view(now: number): HeldCallView[] {
    return [...this.calls.values()].map((call) => ({
      route: call.route,
      tier: call.tier,
      chars: call.chars,
      heldMs: now - call.since,
      quietMs: now - call.grewAt,
    }));
  }
}
