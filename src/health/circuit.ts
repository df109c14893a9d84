import type { Tier } from '../config/schema.js';

/**
 * A tier's circuit breaker. `failures` consecutive failures open it for a cooldown that doubles
 * on each trip in a row (up to `max_cooldown_ms`); after the cooldown one half-open trial
 * request is let through, and its outcome closes or re-opens the circuit. Time is passed in,
 * so the logic is pure and testable.
 */
export class Circuit {
  private consecutiveFailures = 0;
  private trips = 0;
  private openUntil = 0;
  /** A half-open trial is out: until it reports (or its claim expires) nobody else passes. */
  private trialClaimedUntil = 0;

  constructor(private settings: Tier['circuit']) {}

  configure(settings: Tier['circuit']): void {
    this.settings = settings;
  }

  get isOpen(): boolean {
    return this.trips > 0;
  }

  get failuresInARow(): number {
    return this.consecutiveFailures;
  }

  /** When the next trial may run (epoch ms); 0 when closed. */
  get retryAt(): number {
    return this.trips > 0 ? this.openUntil : 0;
  }

  /** May a request plan on this tier now? Closed: yes. Cooling down, or its trial is out: no. */
  isAvailable(now: number): boolean {
    return this.trips === 0 || (now >= this.openUntil && now >= this.trialClaimedUntil);
  }

  /**
   * Called as a request is about to try the tier. Closed: always yes. Cooled down: yes for
   * exactly one caller (the half-open trial), whose claim lapses after `claimMs`.
   */
  claim(now: number, claimMs: number): boolean {
    if (!this.isAvailable(now)) return false;
    if (this.trips > 0) this.trialClaimedUntil = now + claimMs;
    return true;
  }

  /** Records a success; returns true when it closed an open circuit. */
  recordSuccess(): boolean {
    const wasOpen = this.trips > 0;
    this.consecutiveFailures = 0;
    this.trips = 0;
    this.openUntil = 0;
    this.trialClaimedUntil = 0;
    return wasOpen;
  }

  /** Records a failure; returns true when it (re)opened the circuit. */
  recordFailure(now: number): boolean {
    this.consecutiveFailures++;
    const trialFailed = this.trips > 0 && now >= this.openUntil;
    if (this.trips === 0 && this.consecutiveFailures < this.settings.failures) return false;
    if (this.trips > 0 && !trialFailed) return false; // a straggler from before the trip
    const cooldown = Math.min(this.settings.max_cooldown_ms, this.settings.cooldown_ms * 2 ** this.trips);
    this.trips++;
    this.openUntil = now + cooldown;
    this.trialClaimedUntil = 0;
    return true;
  }
}
