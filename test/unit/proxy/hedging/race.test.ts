import { afterEach, describe, expect, it, vi } from 'vitest';
import { type AttemptError, timeoutError } from '../../../../src/proxy/attempt-error.js';
import type { Flight } from '../../../../src/proxy/attempt-start.js';
import { HedgeDoor } from '../../../../src/proxy/hedging/hedge-door.js';
import { race, type RaceEnd } from '../../../../src/proxy/hedging/race.js';
import type { CommitResult, StreamAttempt } from '../../../../src/proxy/stream-attempt.js';
import type { StreamRelay } from '../../../../src/proxy/stream-relay.js';
import type { CommitPort } from '../../../../src/proxy/stream-sink.js';
import { chunk, roleThenSilence } from '../../../helpers/fake-upstream.js';
import { socketClosed, useHarness, waitFor } from '../../../helpers/harness.js';
import { chatCall, RecordingPort, sseEvent, startAttempt, tierAt } from '../../../helpers/proxy-parts.js';

/**
 * Hedged first tokens (src/proxy/hedging/): the door every racing attempt commits through,
 * and the race that starts a hedge once the attempt in flight has no first content after
 * hedge_ms. The door is driven with real attempts on real sockets; the race with attempts
 * whose commit and failure the test decides, on vitest's fake clock (hedge_ms exactly).
 */

const h = useHarness();

describe('HedgeDoor with real attempts', () => {
  it('the first to commit goes through once; the other is stopped in that instant (hedge_lost) and its upstream closed', async () => {
    const slow = await h.fake();
    const fast = await h.fake();
    slow.next(roleThenSilence('slow'));
    fast.next(async (ctx) => {
      // Commits only once the slow attempt is in flight at its upstream.
      await waitFor(() => slow.requests.length === 1, 3000, 'the slow attempt');
      ctx.startStream();
      ctx.raw(sseEvent(chunk({ content: 'Hi' })));
      await ctx.closed;
    });
    const port = new RecordingPort();
    const door = new HedgeDoor(port, []);
    const through = (url: string, name: string): StreamAttempt => {
      const own = door.portFor();
      const { attempt } = startAttempt(url, h.defer, { name, port: own });
      door.enter(attempt, own);
      return attempt;
    };
    const first = through(slow.url, 'slow');
    const second = through(fast.url, 'fast');
    expect(door.committed).toBe(false);
    expect(await second.committed).toMatchObject({ committed: true });
    expect(door.committed).toBe(true);
    expect(await first.committed).toMatchObject({ committed: false, error: { reason: 'hedge_lost', failover: false, blame: null } });
    // The client's attempt count: the loser and the winner (none recorded before).
    expect(port.commits).toEqual([{ tier: 'fast', attempts: 2 }]);
    await socketClosed(slow);
  });
});

/** An attempt whose first content or failure the test decides; a commit goes through its port first, as StreamAttempt's does. */
class ScriptedAttempt implements Pick<StreamAttempt, 'committed' | 'elapsedMs' | 'stop'> {
  readonly committed: Promise<CommitResult>;
  readonly stoppedWith: AttemptError[] = [];
  private settle!: (result: CommitResult) => void;
  private done = false;
  private readonly startedAt = performance.now();

  constructor(
    private readonly port: CommitPort,
    private readonly flight: () => Flight,
  ) {
    this.committed = new Promise((resolve) => (this.settle = resolve));
  }

  get elapsedMs(): number {
    return performance.now() - this.startedAt;
  }

  stop(err: AttemptError): void {
    if (this.done) return;
    this.done = true;
    this.stoppedWith.push(err);
    this.settle({ committed: false, error: err });
  }

  firstContent(): void {
    this.done = true;
    this.port.commit(this.flight().tier, 1);
    this.settle({ committed: true, relay: RELAY, elapsedMs: this.elapsedMs });
  }
}

const RELAY = {} as StreamRelay;
const noFirstToken = (): AttemptError => timeoutError('ttft_timeout', 10_000, 'first_token');

interface Race {
  door: HedgeDoor;
  port: RecordingPort;
  /** Flights by plan index, once started. */
  flights: Flight[];
  /** `after` of each steps.start call. */
  started: number[];
  failed: Array<[string, string]>;
  end: Promise<RaceEnd>;
  attempt(t: number): ScriptedAttempt;
}

/** A race over a plan of `names` (tier 0 in flight at once), hedged after `hedgeMs`; the first flight is `olderBy` ms old already. */
function raceOver(names: string[], hedgeMs: number, olderBy = 0): Race {
  const port = new RecordingPort();
  const door = new HedgeDoor(port, []);
  const flights: Flight[] = [];
  const fly = (t: number): Flight => {
    const tier = tierAt('http://127.0.0.1:1/v1', {}, names[t]);
    const own = door.portFor();
    const attempt = new ScriptedAttempt(own, () => flights[t]) as unknown as StreamAttempt;
    door.enter(attempt, own);
    flights[t] = { t, tier, call: chatCall(tier), attempt, resumeState: null, n: 1 };
    return flights[t];
  };
  const arrivedAt = performance.now();
  const first = fly(0);
  vi.advanceTimersByTime(olderBy);
  const started: number[] = [];
  const failed: Array<[string, string]> = [];
  const end = race(first, hedgeMs, door, arrivedAt, {
    start: async (after) => {
      started.push(after);
      return after + 1 < names.length ? fly(after + 1) : null;
    },
    failed: (hedge, error) => failed.push([hedge.tier.name, error.reason]),
  });
  return { door, port, flights, started, failed, end, attempt: (t) => flights[t].attempt as unknown as ScriptedAttempt };
}

describe('race', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a first content before hedge_ms: alone, no hedge ever started', async () => {
    vi.useFakeTimers();
    const r = raceOver(['a', 'b'], 100);
    await vi.advanceTimersByTimeAsync(99);
    r.attempt(0).firstContent();
    expect(await r.end).toMatchObject({ kind: 'alone', result: { committed: true } });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(r.started).toEqual([]);
    expect(r.port.commits).toEqual([{ tier: 'a', attempts: 1 }]);
  });

  it('starts the hedge exactly hedge_ms after the first started, counted from its own start', async () => {
    vi.useFakeTimers();
    const r = raceOver(['a', 'b'], 100, 60);
    await vi.advanceTimersByTimeAsync(39);
    expect(r.started).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(r.started).toEqual([0]);
  });

  it('the hedge commits first: won (second_won), the first stopped inside that commit, one commit for the client', async () => {
    vi.useFakeTimers();
    const r = raceOver(['a', 'b'], 100);
    await vi.advanceTimersByTimeAsync(150);
    r.attempt(1).firstContent();
    const end = await r.end;
    expect(end).toMatchObject({ kind: 'won', hedged: { at_ms: 100, winner: 'b', loser: 'a', result: 'second_won' } });
    if (end.kind === 'won') expect([end.winner, end.loser]).toEqual([r.flights[1], r.flights[0]]);
    expect(r.attempt(0).stoppedWith.map((e) => e.reason)).toEqual(['hedge_lost']);
    expect(r.port.commits).toEqual([{ tier: 'b', attempts: 2 }]);
  });

  it('the first commits while the hedge runs: won (first_won), the hedge stopped', async () => {
    vi.useFakeTimers();
    const r = raceOver(['a', 'b'], 100);
    await vi.advanceTimersByTimeAsync(150);
    r.attempt(0).firstContent();
    expect(await r.end).toMatchObject({ kind: 'won', hedged: { winner: 'a', loser: 'b', result: 'first_won' } });
    expect(r.attempt(1).stoppedWith.map((e) => e.reason)).toEqual(['hedge_lost']);
    expect(r.port.commits).toEqual([{ tier: 'a', attempts: 2 }]);
  });

  it('the first fails while its hedge runs: the hedge is handed on as the attempt in flight, untouched', async () => {
    vi.useFakeTimers();
    const r = raceOver(['a', 'b'], 100);
    await vi.advanceTimersByTimeAsync(150);
    const error = noFirstToken();
    r.attempt(0).stop(error);
    const end = await r.end;
    expect(end).toMatchObject({ kind: 'handed', error });
    if (end.kind === 'handed') expect(end.next).toBe(r.flights[1]);
    expect(r.attempt(1).stoppedWith).toEqual([]);
    // The first left the door: the hedge's commit later stops no one.
    r.attempt(1).firstContent();
    expect(r.port.commits).toEqual([{ tier: 'b', attempts: 1 }]);
  });

  it('a hedge that fails is recorded; the next tier is hedged at once; the first runs on', async () => {
    vi.useFakeTimers();
    const r = raceOver(['a', 'b', 'c'], 100);
    await vi.advanceTimersByTimeAsync(150);
    r.attempt(1).stop(noFirstToken());
    await vi.advanceTimersByTimeAsync(0);
    expect(r.failed).toEqual([['b', 'ttft_timeout']]);
    expect(r.started).toEqual([0, 1]);
    r.attempt(2).firstContent();
    expect(await r.end).toMatchObject({ kind: 'won', hedged: { winner: 'c', loser: 'a', result: 'second_won' } });
    expect(r.attempt(0).stoppedWith.map((e) => e.reason)).toEqual(['hedge_lost']);
  });

  it('no tier left to hedge with: the first alone, its own verdict awaited', async () => {
    vi.useFakeTimers();
    const r = raceOver(['a'], 100);
    await vi.advanceTimersByTimeAsync(150);
    expect(r.started).toEqual([0]);
    r.attempt(0).stop(noFirstToken());
    expect(await r.end).toMatchObject({ kind: 'alone', result: { committed: false, error: { reason: 'ttft_timeout' } } });
  });
});
