import { describe, expect, it } from 'vitest';
import { attemptLabel, requestPath } from '../../../../src/ui/model/request-path.js';
import { attempt } from '../fixtures.js';

describe('request path text', () => {
  it('reads as the way the request took', () => {
    expect(requestPath([attempt('local', 'ttft_timeout', { ms: 2500 }), attempt('cloud', 'ok')])).toBe('local ✗ ttft 2.5s → cloud ✓');
    expect(requestPath([attempt('local', 'ok')])).toBe('local ✓');
    expect(
      requestPath([
        attempt('local', 'connection_refused'),
        attempt('cloud', 'server_error', { status: 503 }),
        attempt('cloud', 'server_error', { attempt: 2, status: 503 }),
        attempt('backup', 'connection_reset'),
      ]),
    ).toBe('local ✗ refused → cloud ✗ 503 ×2 → backup ✗ reset');
  });

  it('labels each failure briefly', () => {
    expect(attemptLabel(attempt('t', 'idle_timeout'))).toBe('stalled');
    expect(attemptLabel(attempt('t', 'rate_limited', { status: 429 }))).toBe('429');
    expect(attemptLabel(attempt('t', 'connect_timeout', { ms: 1000 }))).toBe('connect 1.0s');
    expect(attemptLabel(attempt('t', 'ttft_timeout', { ms: 800 }))).toBe('ttft 800ms');
    expect(attemptLabel(attempt('t', 'model_not_found', { status: 404 }))).toBe('404 no model');
    // An outcome without a short word is spelled out.
    expect(attemptLabel(attempt('t', 'timeout_or_conflict'))).toBe('timeout or conflict');
  });
});
