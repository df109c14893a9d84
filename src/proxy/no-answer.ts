import type { Tier } from '../config/schema.js';
import { type PayloadFailure, payloadFailure, type TooLongNumbers } from '../fit/payload-failure.js';
import { tierFit } from '../fit/tier-facts.js';
import type { PromptCount } from '../protocols/core/prompt-tokens.js';
import { type AttemptRecord, isLimitSkip } from '../telemetry/events.js';
import type { AttemptError } from './attempt-error.js';
import type { Limited, Opening } from './attempt-start.js';

/** How a request that no tier answered ends: the shape its client's answer takes (answer-request.ts writes it). */
export type NoAnswer =
  /** No tier answered. `timedOut`: every attempt timed out, or the deadline passed (504). */
  | { kind: 'exhausted'; timedOut: boolean; planned: number; attempts: AttemptRecord[]; limited: Limited | null }
  /** No tier answered, and a tier that takes the client's own credential had none, or refused it: a 401 (or its 403). */
  | { kind: 'client_credential'; attempts: AttemptRecord[] }
  /** No planned tier can carry this request (an image URL for Ollama, n > 1 for Anthropic, …). */
  | { kind: 'unsupported'; reasons: string[]; attempts: AttemptRecord[] }
  /** No tier answered, each for the payload's sake, at least one because it is too long (docs/fit.md): a 400. */
  | { kind: 'too_long'; failure: PayloadFailure; attempts: AttemptRecord[] };

/**
 * What the tiers of one request said when they did not answer — refused to open (a request they
 * cannot carry, too long, a limit or budget), or failed — kept for the answer when none does.
 */
export class NoAnswerNotes {
  private readonly unsupported: string[] = [];
  private readonly tooLong: TooLongNumbers[] = [];
  /** The soonest a tier skipped for llm-route's own limit or budget takes requests again. */
  private limited: Limited | null = null;
  /** Every attempt so far timed out (a 504 rather than a 502 when none answers). */
  private allTimedOut = true;

  refused(tier: Tier, refusal: Exclude<Opening, { open: true }>): void {
    if (refusal.why === 'unsupported') this.unsupported.push(`${tier.name}: ${refusal.message}`);
    else if (refusal.why === 'too_long') this.tooLong.push(refusal.numbers);
    else if (refusal.why === 'limited' && (!this.limited || refusal.limited.retryAfterMs < this.limited.retryAfterMs)) this.limited = refusal.limited;
  }

  /** An attempt at `tier` failed for a reason the next tier may not share. */
  failed(tier: Tier, error: AttemptError): void {
    if (error.reason === 'context_length') this.tooLong.push(payloadFailure.numbersOf(error, tierFit(tier).context));
    if (!error.timedOut) this.allTimedOut = false;
  }

  /** The route's deadline passed (or an attempt timed out with nothing left to try): a 504. */
  timedOut(planned: number, attempts: AttemptRecord[]): NoAnswer {
    return { kind: 'exhausted', timedOut: true, planned, attempts, limited: this.limited };
  }

  /** Every planned tier was passed over or failed: why, in the shape the client's answer takes. */
  async answer(planned: number, attempts: AttemptRecord[], prompt: PromptCount): Promise<NoAnswer> {
    // What the client can fix comes first: the credential a tier needed, or refused (an expired login: the client logs in again).
    if (attempts.some((a) => a.outcome === 'no_client_credential' || a.outcome === 'credential_rejected')) return { kind: 'client_credential', attempts };
    if (this.unsupported.length > 0 && this.unsupported.length === attempts.length) return { kind: 'unsupported', reasons: this.unsupported, attempts };
    const failure = await payloadFailure.of(attempts, this.tooLong, prompt);
    if (failure) return { kind: 'too_long', failure, attempts };
    const tried = attempts.filter((a) => a.outcome !== 'unsupported' && !isLimitSkip(a));
    return { kind: 'exhausted', timedOut: tried.length > 0 && this.allTimedOut, planned, attempts, limited: this.limited };
  }
}
