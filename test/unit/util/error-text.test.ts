import { describe, expect, it } from 'vitest';
import { errorText } from '../../../src/util/error-text.js';

describe('errorText', () => {
  it("takes the error's own words from the shapes upstreams use", () => {
    expect(errorText(JSON.stringify({ error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } }))).toBe('Rate limit reached'); // OpenAI
    expect(errorText(JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }))).toBe('Overloaded'); // Anthropic
    expect(errorText(JSON.stringify({ error: 'model "qwen" not found, try pulling it first' }))).toBe('model "qwen" not found, try pulling it first'); // Ollama
    expect(errorText(JSON.stringify({ message: 'Unauthorized', statusCode: 401 }))).toBe('Unauthorized');
  });

  it('falls back to the start of the text, trimmed, for anything else', () => {
    expect(errorText('  <html>502 Bad Gateway</html>\n')).toBe('<html>502 Bad Gateway</html>');
    expect(errorText('x'.repeat(5_000))).toBe('x'.repeat(200));
    expect(errorText('{"error":{"code":42}}')).toBe('{"error":{"code":42}}');
    expect(errorText('[1,2]')).toBe('[1,2]');
    expect(errorText('{"choices":[{"delta":{"content":"x"')).toBe('{"choices":[{"delta":{"content":"x"');
  });

  it('has nothing to say for an empty text', () => {
    expect(errorText('')).toBeUndefined();
    expect(errorText(' \n ')).toBeUndefined();
  });
});
