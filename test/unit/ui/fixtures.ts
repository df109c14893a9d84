import { loadConfigText } from '../../../src/config/load.js';
import type { Config } from '../../../src/config/schema.js';
import type { AttemptOutcome, AttemptRecord, RequestFinished, TelemetryEvent } from '../../../src/telemetry/events.js';

const YAML = `
version: 1
providers:
  ollama:
    type: openai
    base_url: http://127.0.0.1:11434/v1
  openai:
    type: openai
    base_url: https://api.openai.com/v1
    api_key: sk-test
routes:
  chat:
    tiers:
      - name: local
        provider: ollama
        model: qwen2.5:7b
        timeouts: { ttft_ms: 2500 }
      - name: cloud
        provider: openai
        model: gpt-4o-mini
  embed:
    tiers:
      - name: canary
        provider: openai
        model: gpt-4.1-nano
        weight: 25
      - name: main
        provider: openai
        model: gpt-4o-mini
`;

/** Two routes: chat (local → cloud) and embed (canary at 25% → main). */
export function testConfig(): Config {
  return loadConfigText(YAML, '/t/llm-route.yaml', {});
}

let nextId = 0;

/** The events of one request: its attempts in order, then a commit (streams) and the end. */
export function requestEvents(route: string, attempts: AttemptRecord[], end: Partial<RequestFinished> = {}): TelemetryEvent[] {
  const id = `r${++nextId}`;
  const events: TelemetryEvent[] = [{ type: 'request_start', id, route, stream: true, protocol: 'chat' }];
  const answered = attempts.find((a) => a.outcome === 'ok');
  for (let i = 0; i < attempts.length; i++) {
    const record = attempts[i];
    events.push({
      type: 'attempt_end',
      id,
      route,
      tier: record.tier,
      provider: 'p',
      record,
      stream: true,
      blame: record.outcome === 'ok' ? null : 'tier',
      model: 'm',
      startMs: 0,
      endMs: record.ms,
    });
    const next = attempts[i + 1];
    const { outcome } = record;
    if (outcome !== 'ok' && outcome !== 'budget' && outcome !== 'too_long' && outcome !== 'no_client_credential' && next && next.tier !== record.tier) {
      events.push({ type: 'failover', id, route, fromTier: record.tier, reason: outcome });
    }
  }
  const ttftMs = end.ttftMs ?? attempts.reduce((sum, a) => sum + a.ms, 0);
  if (answered) events.push({ type: 'commit', id, route, tier: answered.tier, ttftMs });
  events.push({
    type: 'request_end',
    id,
    route,
    tier: answered?.tier ?? null,
    status: answered ? 200 : 502,
    outcome: answered ? 'ok' : 'failed',
    stream: true,
    committed: Boolean(answered),
    attempts,
    ttftMs: answered ? ttftMs : undefined,
    durationMs: ttftMs + 500,
    chunkErrors: 0,
    startedAt: Date.now(),
    protocol: 'chat',
    provider: answered ? 'p' : null,
    model: answered ? 'm' : null,
    usage: answered ? { prompt_tokens: 12, completion_tokens: 143 } : undefined,
    ...end,
  });
  return events;
}

/** One attempt's record: `ms` 100 and attempt 1 unless given. */
export const attempt = (tier: string, outcome: AttemptOutcome, fields: Partial<AttemptRecord> = {}): AttemptRecord => ({
  tier,
  attempt: 1,
  outcome,
  ms: 100,
  ...fields,
});
