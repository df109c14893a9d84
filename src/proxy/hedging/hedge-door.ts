import type { Tier } from '../../config/schema.js';
import type { AttemptRecord } from '../../telemetry/events.js';
import { AttemptError } from '../attempt-error.js';
import type { Door } from '../attempt-start.js';
import type { StreamAttempt } from '../stream-attempt.js';
import type { CommitPort, StreamSink } from '../stream-sink.js';

/**
 * The one way to the client (the commit port) for attempts that may race: the first to commit
 * goes through and every other attempt still waiting is stopped at once, inside that commit,
 * so no loser can reach the client afterwards.
 */
export class HedgeDoor implements Door {
  private readonly waiting = new Set<StreamAttempt>();
  private opened = false;

  constructor(
    private readonly port: CommitPort,
    private readonly attempts: AttemptRecord[],
  ) {}

  get committed(): boolean {
    return this.opened;
  }

  /** A port for one attempt; `enter` ties it to the attempt once that exists. */
  portFor(): CommitPort & { attempt: StreamAttempt | null } {
    const port = { attempt: null as StreamAttempt | null, commit: (tier: Tier, _n: number): StreamSink => this.commit(port.attempt, tier) };
    return port;
  }

  enter(attempt: StreamAttempt, port: { attempt: StreamAttempt | null }): void {
    port.attempt = attempt;
    this.waiting.add(attempt);
  }

  /** The attempt settled on its own (failed): it no longer races. */
  leave(attempt: StreamAttempt): void {
    this.waiting.delete(attempt);
  }

  private commit(winner: StreamAttempt | null, tier: Tier): StreamSink {
    this.opened = true;
    if (winner) this.waiting.delete(winner);
    const losers = [...this.waiting];
    this.waiting.clear();
    for (const loser of losers) loser.stop(hedgeLost(tier.name));
    // The client's attempt count: those recorded, the losers stopped just now, and this one.
    return this.port.commit(tier, this.attempts.length + losers.length + 1);
  }
}

function hedgeLost(winner: string): AttemptError {
  return new AttemptError('hedge_lost', `tier ${winner} delivered first content first`, {
    phase: 'first_token',
    failover: false,
    retryable: false,
    blame: null,
  });
}
