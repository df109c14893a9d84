import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../src/config/load.js';
import { SessionBoard } from '../../../src/control/session-board.js';
import { TelemetryBus } from '../../../src/telemetry/bus.js';
import { finished } from '../../helpers/usage-kit.js';

// The server's per-session summaries: bounded (the least recently used session goes first),
// kinds and prices from the config in force when asked.

const YAML = `
version: 1
providers:
  here: { type: openai, base_url: "http://127.0.0.1:11434/v1" }
  there: { type: openai, base_url: "https://api.example.com/v1", price: { input_per_mtok: 1, output_per_mtok: 2 } }
routes:
  chat:
    tiers:
      - { name: local, provider: here, model: small }
      - { name: cloud, provider: there, model: big }
`;

function board(max: number) {
  const bus = new TelemetryBus();
  return { bus, board: new SessionBoard(bus, max), config: loadConfigText(YAML, '/test/llm-route.yaml', {}) };
}

describe('SessionBoard', () => {
  it('forgets the least recently used session first, and only sessions', () => {
    const { bus, board: sessions, config } = board(3);
    for (const session of ['a', 'b', 'c']) bus.emit(finished({ session }));
    bus.emit(finished({ session: 'a' })); // a is used again: b is now the oldest
    bus.emit(finished({ session: 'd' }));
    bus.emit(finished({})); // no session: not remembered
    expect(sessions.size).toBe(3);
    expect(sessions.summary('b', config).requests).toBe(0);
    expect(sessions.summary('a', config).requests).toBe(2);
    expect(sessions.summary('c', config).requests).toBe(1);
    expect(sessions.summary('d', config).requests).toBe(1);
  });

  it('counts failed requests, fallbacks by tier and outcome, and prices only priced tiers', () => {
    const { bus, board: sessions, config } = board(10);
    bus.emit(finished({ session: 's', tier: 'local', model: 'small', usage: { prompt_tokens: 500, completion_tokens: 100 } }));
    bus.emit(
      finished({
        session: 's',
        tier: 'cloud',
        model: 'big',
        usage: { prompt_tokens: 1_000_000, completion_tokens: 1_000_000 },
        attempts: [
          { tier: 'local', attempt: 1, outcome: 'ttft_timeout', ms: 2000 },
          { tier: 'cloud', attempt: 1, outcome: 'ok', status: 200, ms: 300 },
        ],
      }),
    );
    bus.emit(
      finished({
        session: 's',
        tier: null,
        model: null,
        status: 502,
        outcome: 'failed',
        usage: undefined,
        attempts: [
          { tier: 'local', attempt: 1, outcome: 'connection_refused', ms: 1 },
          { tier: 'cloud', attempt: 1, outcome: 'server_error', status: 500, ms: 40 },
        ],
      }),
    );
    const s = sessions.summary('s', config);
    expect(s).toMatchObject({ requests: 3, local_requests: 1, cloud_requests: 1, failed_requests: 1, fallbacks: 2, cost_usd: 3 });
    expect(s.last).toMatchObject({ tier: null, kind: null, status: 502, outcome: 'failed' });
    expect(s.fallback_reasons).toEqual(
      expect.arrayContaining([
        { tier: 'local', outcome: 'ttft_timeout', count: 1 },
        { tier: 'local', outcome: 'connection_refused', count: 1 },
        { tier: 'cloud', outcome: 'server_error', count: 1 },
      ]),
    );
  });

  it('a tier the tier file no longer has is neither local nor cloud', () => {
    const { bus, board: sessions, config } = board(10);
    bus.emit(finished({ session: 's', tier: 'gone', model: 'm' }));
    expect(sessions.summary('s', config)).toMatchObject({ local_requests: 0, cloud_requests: 0, last: { tier: 'gone', kind: null } });
  });
});
