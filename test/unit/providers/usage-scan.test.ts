import { describe, expect, it } from 'vitest';
import { chatWire } from '../../../src/protocols/chat/wire.js';
import { findUsageObject } from '../../../src/providers/usage-scan.js';

const usageOf = (value: unknown): ReturnType<typeof chatWire.readUsage> =>
  chatWire.readUsage(Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)));

describe('reading usage from a whole answer without parsing it', () => {
  const answer = (content: string, usage: unknown, extra: Record<string, unknown> = {}) => ({
    id: 'c',
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage,
    ...extra,
  });

  it('finds the usage of an ordinary answer', () => {
    expect(usageOf(answer('hi', { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 }))).toEqual({ prompt_tokens: 3, completion_tokens: 5 });
  });

  it('is not fooled by "usage" inside the text, as a value, or with braces in strings', () => {
    const tricky = answer(
      'the "usage": {"prompt_tokens": 999} field {',
      { prompt_tokens: 1, completion_tokens: 2, details: { note: 'a } b' } },
      { kind: 'usage', system_fingerprint: 'fp' },
    );
    expect(usageOf(tricky)).toEqual({ prompt_tokens: 1, completion_tokens: 2 });
  });

  it('usage first, pretty-printed, or missing', () => {
    expect(usageOf(JSON.stringify({ usage: { prompt_tokens: 4, completion_tokens: 6 }, choices: [] }, null, 2))).toEqual({
      prompt_tokens: 4,
      completion_tokens: 6,
    });
    expect(usageOf(answer('x', null))).toBeUndefined();
    expect(usageOf({ choices: [] })).toBeUndefined();
  });

  it('tells a body that is not a JSON object', () => {
    expect(usageOf('<html>oops</html>')).toBe('not_json');
    expect(usageOf('[1,2]')).toBe('not_json');
    expect(usageOf('')).toBe('not_json');
    expect(findUsageObject(Buffer.from('{"usage": {"prompt_tokens": 1'))).toBe('not_json');
  });
});
