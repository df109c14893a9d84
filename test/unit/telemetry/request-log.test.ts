import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { TelemetryBus } from '../../../src/telemetry/bus.js';
import type { RequestFinished, TelemetryEvent } from '../../../src/telemetry/events.js';
import { attachRequestLog, toLogLine } from '../../../src/telemetry/request-log.js';
import { finished as requestEnd } from '../../helpers/usage-kit.js';

/** A Writable that keeps each write as it came: the log's batching is one write per batch. */
class Recorded extends Writable {
  readonly writes: string[] = [];
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.writes.push(chunk.toString('utf8'));
    done();
  }
  lines(): Record<string, unknown>[] {
    return this.writes
      .join('')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }
}

/** A request's end with round-number-free times (the line rounds them), no usage unless given. */
const finished = (fields: Partial<RequestFinished> = {}): RequestFinished =>
  requestEnd({
    id: 'r1',
    tier: 'local',
    provider: 'p',
    model: 'm',
    attempts: [{ tier: 'local', attempt: 1, outcome: 'ok', ms: 41.6 }],
    durationMs: 120.4,
    ttftMs: 40.5,
    startedAt: 0,
    usage: undefined,
    ...fields,
  });

function logOf(events: TelemetryEvent[]): Record<string, unknown>[] {
  const bus = new TelemetryBus();
  const out = new Recorded();
  const detach = attachRequestLog(bus, out);
  for (const event of events) bus.emit(event);
  detach(); // flushes what is pending
  return out.lines();
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('toLogLine', () => {
  it('shapes a finished request: time and event first, times rounded, no optional field it lacks', () => {
    const line = toLogLine(finished(), '2026-01-01T00:00:00.000Z');
    expect(Object.keys(line).slice(0, 2)).toEqual(['time', 'event']);
    expect(line).toEqual({
      time: '2026-01-01T00:00:00.000Z',
      event: 'request',
      id: 'r1',
      route: 'chat',
      protocol: 'chat',
      tier: 'local',
      status: 200,
      outcome: 'ok',
      stream: true,
      attempts: [{ tier: 'local', attempt: 1, outcome: 'ok', ms: 41.6 }],
      ttft_ms: 41,
      duration_ms: 120,
    });
  });

  it('says null for a request rejected before routing and one that never had a first token', () => {
    const line = toLogLine(finished({ route: '', tier: null, status: 400, outcome: 'bad_request', ttftMs: undefined, attempts: [] }), 't');
    expect(line.route).toBeNull();
    expect(line.tier).toBeNull();
    expect(line.ttft_ms).toBeNull();
  });

  it("carries what happened on the way: chunk errors, a hedge, the loser's usage, the error", () => {
    const line = toLogLine(
      finished({
        chunkErrors: 2,
        error: 'all tiers failed',
        hedged: { at_ms: 800, winner: 'cloud', loser: 'local', result: 'second_won' },
        loserUsage: { tier: 'local', provider: 'p', model: 'm', usage: { prompt_tokens: 10, completion_tokens: 3 } },
      }),
      't',
    );
    expect(line.chunk_errors).toBe(2);
    expect(line.error).toBe('all tiers failed');
    expect(line.hedged).toEqual({ at_ms: 800, winner: 'cloud', loser: 'local' });
    expect(line.loser_usage).toEqual({ tier: 'local', prompt_tokens: 10, completion_tokens: 3 });
    expect(toLogLine(finished(), 't')).not.toHaveProperty('chunk_errors');
  });
});

describe('attachRequestLog', () => {
  it('writes one JSON line per finished request, stamped with the time now', () => {
    const before = Date.now();
    const lines = logOf([{ type: 'request_start', id: 'r1', route: 'chat', stream: true, protocol: 'chat' }, finished()]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ event: 'request', id: 'r1', route: 'chat', ttft_ms: 41 });
    const time = Date.parse(lines[0].time as string);
    expect(time).toBeGreaterThanOrEqual(before - 1);
    expect(Object.keys(lines[0])[0]).toBe('time');
  });

  it('a quiet server writes a line on the next turn; lines of overlapping requests share a write', async () => {
    const bus = new TelemetryBus();
    const out = new Recorded();
    const detach = attachRequestLog(bus, out);
    bus.emit({ type: 'request_start', id: 'a', route: 'chat', stream: false, protocol: 'chat' });
    bus.emit({ type: 'request_start', id: 'b', route: 'chat', stream: false, protocol: 'chat' });
    bus.emit(finished({ id: 'a' }));
    await nextTurn();
    expect(out.writes).toEqual([]); // b is still open: a's line waits for it
    bus.emit(finished({ id: 'b' }));
    detach();
    expect(out.writes).toHaveLength(1);
    expect(out.lines().map((l) => l.id)).toEqual(['a', 'b']);

    const quiet = new Recorded();
    const detachQuiet = attachRequestLog(bus, quiet);
    bus.emit(finished({ id: 'c' }));
    expect(quiet.writes).toEqual([]);
    await nextTurn();
    expect(quiet.lines().map((l) => l.id)).toEqual(['c']);
    detachQuiet();
  });

  it('says a dropped control, a catch-all name and an unknown path once each, not on every request', () => {
    const dropped: TelemetryEvent = { type: 'control_dropped', route: 'chat', tier: 'local', message: 'top_k: the tier cannot take it' };
    const lines = logOf([
      dropped,
      dropped,
      { ...dropped, tier: 'cloud' },
      { type: 'catch_all_alias', route: 'chat', model: 'gtp-4' },
      { type: 'catch_all_alias', route: 'chat', model: 'gtp-4' },
      { type: 'unknown_endpoint', method: 'GET', path: '/v2/x', userAgent: undefined, protocol: 'chat' },
      { type: 'unknown_endpoint', method: 'GET', path: '/v2/x', userAgent: undefined, protocol: 'chat' },
      { type: 'unknown_endpoint', method: 'POST', path: '/v2/x', userAgent: 'curl/8', protocol: 'chat' },
    ]);
    expect(lines.map((l) => `${l.event} ${l.tier ?? l.model ?? l.method}`)).toEqual([
      'control_dropped local',
      'control_dropped cloud',
      'catch_all_alias gtp-4',
      'unknown_endpoint GET',
      'unknown_endpoint POST',
    ]);
    expect(lines[2].message).toBe('model "gtp-4" names no route; route "chat" took it only through its catch-all alias "*" (said once per name)');
    expect(lines[3]).toMatchObject({
      path: '/v2/x',
      user_agent: null,
      message: 'GET /v2/x is no endpoint of llm-route: answered 404 (said once per method and path)',
    });
    expect(lines[4].user_agent).toBe('curl/8');
  });

  it('leaves out a passing periodic check, keeps a failing one and every warm-up; a model load gets its own line', () => {
    const check = { type: 'health_check', route: 'chat', tier: 'local', reachable: true, modelPresent: true, ttftMs: 30 } as const;
    const lines = logOf([
      { ...check, kind: 'check', ok: true },
      { ...check, kind: 'check', ok: false, error: 'refused' },
      { ...check, kind: 'warmup', ok: true },
      { type: 'model_load', id: 'l1', route: 'chat', asked: 'load', tier: 'local', answeredBy: 'llm-route', ok: true, durationMs: 1500.7 },
      { type: 'request_start', id: 'x', route: 'chat', stream: false, protocol: 'chat' },
    ]);
    expect(lines.map((l) => `${l.event} ${l.kind ?? ''}`.trim())).toEqual(['health_check check', 'health_check warmup', 'model_load']);
    expect(lines[0].error).toBe('refused');
    expect(lines[2]).toMatchObject({ answered_by: 'llm-route', duration_ms: 1501, ok: true });
    expect(lines[2]).not.toHaveProperty('durationMs');
  });

  it('stops writing once detached', () => {
    const bus = new TelemetryBus();
    const out = new Recorded();
    attachRequestLog(bus, out)();
    bus.emit(finished());
    expect(out.writes).toEqual([]);
  });
});
