import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../src/config/load.js';
import { TelemetryBus } from '../../../src/telemetry/bus.js';
import type { RequestFinished } from '../../../src/telemetry/events.js';
import { Metrics } from '../../../src/telemetry/metrics.js';
import { toLogLine } from '../../../src/telemetry/request-log.js';

const config = loadConfigText(
  'version: 1\nproviders:\n  p: { type: openai, base_url: "http://127.0.0.1:1/v1" }\nroutes:\n  chat:\n    tiers: [{ provider: p, model: m }]\n',
  '/t/llm-route.yaml',
  {},
);

function finished(fields: Partial<RequestFinished>): RequestFinished {
  return {
    type: 'request_end',
    id: 'r1',
    route: 'chat',
    tier: 'p',
    status: 200,
    outcome: 'ok',
    stream: false,
    committed: false,
    attempts: [],
    durationMs: 12,
    startedAt: 0,
    protocol: 'chat',
    provider: 'p',
    model: 'm',
    chunkErrors: 0,
    ...fields,
  };
}

const SAVERS = [
  { saver: 'whitespace', before: 1000, after: 950 },
  { saver: 'minify_tool_json', before: 950, after: 950 },
  { saver: 'trim_history', before: 950, after: 950, failed: true },
];

describe('saver telemetry', () => {
  it('metrics: tokens saved (0 for a saver that saved nothing) and failures, by route and saver', async () => {
    const bus = new TelemetryBus();
    const metrics = new Metrics(bus, config);
    bus.emit(finished({ savers: SAVERS }));
    bus.emit(
      finished({
        savers: [
          { saver: 'whitespace', before: 500, after: 480 },
          { saver: 'trim_history', before: 480, after: 480, failed: true },
        ],
      }),
    );
    bus.emit(finished({ route: '', savers: SAVERS })); // rejected before routing: not counted
    bus.emit(finished({})); // a route without savers adds nothing
    const text = await metrics.render();
    expect(text).toContain('llm_saver_tokens_saved_total{route="chat",saver="whitespace"} 70');
    expect(text).toContain('llm_saver_tokens_saved_total{route="chat",saver="minify_tool_json"} 0');
    expect(text).toContain('llm_saver_tokens_saved_total{route="chat",saver="trim_history"} 0');
    expect(text).toContain('llm_saver_failures_total{route="chat",saver="trim_history"} 2');
    expect(text).not.toContain('llm_saver_failures_total{route="chat",saver="whitespace"}');
  });

  it("the request log line: savers measured, and the upstream's prompt_tokens side by side", () => {
    const line = toLogLine(finished({ savers: SAVERS, usage: { prompt_tokens: 1210, completion_tokens: 7 } }), 't');
    expect(line.savers).toEqual(SAVERS);
    expect(line.prompt_tokens_upstream).toBe(1210);
    expect(Object.keys(line)).toContain('usage');
    const noUsage = toLogLine(finished({ savers: SAVERS }), 't');
    expect(noUsage).not.toHaveProperty('prompt_tokens_upstream');
    const none = toLogLine(finished({ usage: { prompt_tokens: 3, completion_tokens: 1 } }), 't');
    expect(none).not.toHaveProperty('savers');
    expect(none).not.toHaveProperty('prompt_tokens_upstream');
  });
});
