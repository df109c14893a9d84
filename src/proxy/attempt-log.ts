import type { Route, Tier } from '../config/schema.js';
import type { ClientRequest } from '../protocols/core/types.js';
import type { Usage } from '../protocols/core/usage.js';
import { redactSecrets } from '../providers/redact-secrets.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import type { AttemptOutcome, AttemptRecord, Blame } from '../telemetry/events.js';
import type { AttemptError } from './attempt-error.js';
import type { RequestHolds } from './request-holds.js';

/** The request whose attempts are logged (the routing request). */
interface Logged {
  readonly id: string;
  readonly route: Route;
  readonly request: ClientRequest;
  /** When the request arrived (performance.now()): attempts are placed on its timeline. */
  readonly arrivedAt: number;
}

/** Why a tier was passed over with nothing sent to it. */
export type SkipOutcome = Extract<AttemptOutcome, 'unsupported' | 'no_client_credential' | 'too_long' | 'budget' | 'rate_limited'>;

/**
 * One request's attempts: the list its answer, log line and usage row carry, each entry also
 * published as an `attempt_end` event. `n` is the try's number on its tier (1 for the first).
 * The record of how the request left each tier is also what ends the tier's hold on its
 * limits and budgets (`left`, `hedgeLost`) and charges it what it used (`spent`): nothing else
 * on the request path releases or settles one, and whatever is still held ends with the
 * request (RequestHolds.end, from the exchange's close).
 */
export class AttemptLog {
  /** The request's attempts so far, in the order they ended. */
  readonly records: AttemptRecord[] = [];

  constructor(
    private readonly req: Logged,
    private readonly telemetry: TelemetryBus,
    private readonly holds: RequestHolds | null = null,
  ) {}

  /** An attempt that answered: a stream that committed, or a whole answer (with the upstream's status). */
  ok(tier: Tier, n: number, ms: number, status?: number): void {
    this.add(tier, n, 'ok', ms, status, null);
  }

  /** An attempt that gave no answer, as its error says. */
  failed(tier: Tier, n: number, error: AttemptError, ms: number): void {
    this.add(tier, n, error.reason, ms, error.status, error.blame, error.message);
  }

  /** A tier passed over before anything was sent to it: no tier's health is concerned. `waitedMs`: time spent waiting for a limit. */
  skipped(tier: Tier, n: number, outcome: SkipOutcome, message: string, waitedMs = 0): void {
    this.add(tier, n, outcome, waitedMs, undefined, null, message);
  }

  /**
   * A streaming attempt another tier's hedge beat to first content: its tier is left, charged
   * what its upstream reported it used before it was stopped (a paid tier may bill it).
   */
  hedgeLost(tier: Tier, n: number, ms: number, winner: string, usage: Usage | undefined): void {
    this.add(tier, n, 'hedge_lost', ms, undefined, null, `tier ${winner} delivered first content first`);
    if (usage) this.holds?.charge(tier, usage, '');
    this.holds?.leave(tier);
  }

  /**
   * The request is done with the tier without its answer (it failed over, its payload was
   * rejected, a hedge or resume on it failed, its half-open trial went to another request, or
   * it was opened too late to start): what it holds goes back now, not at the request's end.
   */
  left(tier: Tier): void {
    this.holds?.leave(tier);
  }

  /**
   * What the tier used for the client's answer: its upstream's usage, else `text` (what it
   * wrote, estimated). The committed tier is charged its own part (all of the answer, or what it
   * delivered before a break), a resume's tier its own; each hold settles to it at the end.
   */
  spent(tier: Tier, usage: Usage | undefined, text: string): void {
    this.holds?.charge(tier, usage, text);
  }

  /** The route's deadline passed before the try could start: nothing was sent, so no `attempt_end` is published. */
  deadlinePassed(tier: Tier, n: number, message: string): void {
    this.records.push({ tier: tier.name, attempt: n, outcome: 'deadline', ms: 0, message });
  }

  private add(tier: Tier, n: number, outcome: AttemptOutcome, ms: number, status: number | undefined, blame: Blame, message?: string): void {
    const { req } = this;
    const entry: AttemptRecord = { tier: tier.name, attempt: n, outcome, ms: Math.round(ms) };
    if (status !== undefined) entry.status = status;
    // Upstream messages can echo the key ("Incorrect API key provided: sk-…") or the client's own
    // credential; this record reaches clients, logs and the usage database.
    if (message !== undefined) entry.message = redactSecrets(message, tier.provider, req.request.headers.credential?.secrets);
    this.records.push(entry);
    // `ms` counts from the attempt's start to now (its end, or a stream's commit).
    const endMs = performance.now() - req.arrivedAt;
    this.telemetry.emit({
      type: 'attempt_end',
      id: req.id,
      route: req.route.name,
      tier: tier.name,
      provider: tier.provider.name,
      record: entry,
      stream: req.request.stream,
      blame,
      model: tier.model,
      startMs: endMs - ms,
      endMs,
    });
  }
}
