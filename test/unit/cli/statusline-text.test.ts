import { describe, expect, it } from 'vitest';
import { type SessionAnswer, notRunningText, statuslineText } from '../../../src/cli/statusline-text.js';

// The status line's one line, from a session summary (colours off unless asked).

const base: SessionAnswer = {
  requests: 5,
  last: { route: 'chat', tier: 'local', kind: 'local', model: 'qwen2.5-coder:14b', outcome: 'ok' },
  local_requests: 4,
  cloud_requests: 1,
  failed_requests: 0,
  fallbacks: 0,
  tool_calls_recovered: 0,
  cost_usd: 0.0123,
  today: { cost_usd: 4.2 },
};

describe('statuslineText', () => {
  it('the last tier and model, the split, fallbacks, session and today', () => {
    expect(statuslineText(base, false)).toBe('llm-route ▸ local qwen2.5-coder:14b · 4 local / 1 cloud · 0 fallbacks · $0.0123 (today $4.20)');
  });

  it('names the tier when its name says more than its kind; recovered tool calls and failures when there are some', () => {
    const answer: SessionAnswer = {
      ...base,
      last: { route: 'chat', tier: 'anthropic', kind: 'cloud', model: 'claude-sonnet-4-5', outcome: 'ok' },
      fallbacks: 2,
      failed_requests: 1,
      tool_calls_recovered: 3,
      today: null,
    };
    expect(statuslineText(answer, false)).toBe(
      'llm-route ▸ cloud anthropic claude-sonnet-4-5 · 4 local / 1 cloud / 1 failed · 2 fallbacks · 3 tool calls recovered · $0.0123',
    );
  });

  it('a last request no tier answered, in red', () => {
    const answer: SessionAnswer = { ...base, last: { route: 'chat', tier: null, kind: null, model: null, outcome: 'timeout' } };
    expect(statuslineText(answer, true)).toContain('\u001b[31m✗ chat: no tier answered (timeout)\u001b[0m');
  });

  it('no server: dim, and why when it is not simply down', () => {
    expect(notRunningText(true)).toBe('\u001b[2mllm-route not running\u001b[0m');
    expect(notRunningText(false, 'no answer from 127.0.0.1:4141 within 1000 ms')).toBe('llm-route: no answer from 127.0.0.1:4141 within 1000 ms');
  });
});
