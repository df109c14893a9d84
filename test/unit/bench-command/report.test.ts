import { describe, expect, it } from 'vitest';
import { aggregate } from '../../../src/bench-command/aggregate.js';
import type { Failure, Sample, Success } from '../../../src/bench-command/measure.js';
import { ProgressBar, type TerminalStream } from '../../../src/bench-command/progress.js';
import { benchPrompts } from '../../../src/bench-command/prompts.js';
import { renderHuman, renderJson, targetLabel } from '../../../src/bench-command/report.js';
import type { BenchTarget } from '../../../src/bench-command/targets.js';

// aggregate reads only who the target is; how it is reached does not matter here.
const direct = { route: 'chat', tier: 'local', provider: 'ollama', model: 'qwen3:8b' } as BenchTarget;
const proxied = { route: 'chat', tier: null, provider: null, model: 'chat' } as BenchTarget;

const ok = (ttftMs: number, fields: Partial<Success> = {}): Success => ({
  ok: true,
  ttftMs,
  totalMs: 1000,
  outputTokens: 50,
  tokenSource: 'usage',
  promptTokens: 20,
  cachedTokens: null,
  servedBy: null,
  staleRetries: 0,
  ...fields,
});
const failed = (reason: string, message: string, fields: Partial<Failure> = {}): Failure => ({
  ok: false,
  reason,
  status: null,
  message,
  staleRetries: 0,
  ...fields,
});

describe('aggregate', () => {
  it("sums a tier's samples: spreads over the successes, rates, sources, stale retries and its errors", () => {
    const samples: Sample[] = [
      ok(100),
      ok(200, { outputTokens: 100, totalMs: 2000, tokenSource: 'counted', staleRetries: 1 }),
      ok(300, { promptTokens: null }),
      failed('server_error', '503 busy', { status: 503 }),
    ];
    const result = aggregate(direct, samples);
    expect(result).toMatchObject({
      route: 'chat',
      tier: 'local',
      requests: 4,
      errors: 1,
      ttft_ms: { p50: 200, min: 100, max: 300 },
      total_ms: { p50: 1000, max: 2000 },
      tokens_per_s: 50,
      output_tokens: 66.7,
      token_source: 'mixed',
      prompt: 'unique',
      prompt_tokens: 20,
      cached_tokens: null,
      stale_socket_retries: 1,
      error_samples: [{ reason: 'server_error', status: 503, message: '503 busy', count: 1 }],
    });
    expect(result).not.toHaveProperty('served_by');
    expect(result.histogram.reduce((sum, b) => sum + b.count, 0)).toBe(3);
  });

  it('keeps the five most frequent distinct failures, most first; through a proxy, counts who answered', () => {
    const failures = [
      ...Array.from({ length: 3 }, () => failed('timeout', 'no answer in 30s')),
      ...['a', 'b', 'c', 'd', 'e'].map((m) => failed('server_error', m)),
      failed('timeout', 'no answer in 30s'),
    ];
    const result = aggregate(proxied, [...failures, ok(10, { servedBy: 'local' }), ok(20, { servedBy: 'cloud' }), ok(30, { servedBy: 'local' }), ok(40)], true);
    expect(result.error_samples).toHaveLength(5);
    expect(result.error_samples[0]).toEqual({ reason: 'timeout', status: null, message: 'no answer in 30s', count: 4 });
    expect(result.served_by).toEqual({ local: 2, cloud: 1, unknown: 1 });
    expect(result.prompt).toBe('same');
  });
});

describe('the report', () => {
  it('labels a tier as route/tier, a proxy run as the route', () => {
    expect(targetLabel({ route: 'chat', tier: 'local' })).toBe('chat/local');
    expect(targetLabel({ route: 'chat', tier: null })).toBe('chat');
  });

  it('writes a block per tier: heading, the percentile table, tokens, prompt, histogram and errors', () => {
    const text = renderHuman([aggregate(direct, [ok(100), ok(300), failed('connection_refused', 'refused')])]);
    const lines = text.split('\n');
    expect(lines[0]).toBe('chat/local  (ollama · qwen3:8b)  3 requests, 1 error');
    expect(lines[1].trim().split(/\s+/)).toEqual(['p50', 'p95', 'p99', 'min', 'max']);
    expect(lines[2]).toBe(`  TTFT    ${['100.0', '300.0', '300.0', '100.0', '300.0'].map((c) => c.padStart(10)).join('')} ms`);
    expect(text).toContain('  tok/s   50.0 mean (output tokens ÷ total time; 50 tokens per answer, from usage)');
    expect(text).toContain('  prompt  unique per request (nonce first: no prompt-cache hit); 20 tokens per request, cached tokens not reported');
    expect(text).toContain('  TTFT histogram\n    100.0 – 125.0 ms  █');
    expect(text).toContain('  errors\n    1× connection_refused: refused\n');
  });

  it('says when every request failed, without a table, and names the tiers that answered through a proxy', () => {
    const allFailed = renderHuman([aggregate(direct, [failed('timeout', 'slow'), failed('timeout', 'slow')])]);
    expect(allFailed.split('\n')[0]).toBe('chat/local  (ollama · qwen3:8b)  2 requests, all 2 failed');
    expect(allFailed).not.toContain('TTFT');
    const proxy = renderHuman([aggregate(proxied, [ok(10, { servedBy: 'local', staleRetries: 1 })])]);
    expect(proxy.split('\n')[0]).toBe('chat  (through the proxy; answered by local ×1)  1 request, 0 errors');
    expect(proxy).toContain('1 request was sent again on a new connection');
  });

  it('gives --json one document of every tier', () => {
    const results = [aggregate(direct, [ok(100)]), aggregate(proxied, [])];
    expect(JSON.parse(renderJson(results))).toEqual({ tiers: JSON.parse(JSON.stringify(results)) });
    expect(renderJson(results).endsWith('}\n')).toBe(true);
  });
});

describe('prompts and the progress bar', () => {
  it('puts a nonce first in every prompt, unless the same prompt is asked for', () => {
    let n = 0;
    const next = benchPrompts('Count to 3.', false, () => `n${n++}`);
    expect([next(), next()]).toEqual(['[n0] Count to 3.', '[n1] Count to 3.']);
    expect(benchPrompts('Count to 3.', true)()).toBe('Count to 3.');
  });

  it('draws only on a terminal, within its width; the last update always shows, and clear removes it', () => {
    expect(ProgressBar.on({ isTTY: false, write: () => true })).toBeNull();
    const written: string[] = [];
    const stream: TerminalStream = { isTTY: true, columns: 40, write: (text) => written.push(text) > 0 };
    const bar = ProgressBar.on(stream);
    if (!bar) throw new Error('a terminal gets a bar');
    bar.update(10, 10, 'chat/local');
    expect(written).toHaveLength(1);
    const line = written[0].replace('\r\x1b[2K', '');
    expect(line.startsWith(`[${'█'.repeat(29)}] 10/10 `)).toBe(true);
    expect(line).toHaveLength(39); // cut to the width, a column short of it
    bar.clear();
    expect(written[1]).toBe('\r\x1b[2K');
    bar.clear();
    expect(written).toHaveLength(2); // nothing drawn since: nothing to clear
  });
});
