import { describe, expect, it } from 'vitest';
import { detectProtocol } from '../../../src/savers/detect-protocol.js';

describe('detectProtocol', () => {
  it("tells the protocol from the body's shape", () => {
    expect(detectProtocol({ input: 'hi' })).toBe('responses');
    expect(detectProtocol({ input: [{ role: 'user', content: 'hi' }], instructions: 'x' })).toBe('responses');
    expect(detectProtocol({ system: 'x', messages: [] })).toBe('messages');
    expect(detectProtocol({ messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'ok' }] }] })).toBe('messages');
    expect(detectProtocol({ messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', data: '' } }] }] })).toBe('messages');
    expect(detectProtocol({ messages: [{ role: 'system', content: 'x' }] })).toBe('chat');
    expect(detectProtocol({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] })).toBe('chat');
    expect(detectProtocol({ messages: [{ role: 'assistant', content: null, tool_calls: [] }] })).toBe('chat');
    expect(detectProtocol({ messages: [{ role: 'user', content: 'plain' }] })).toBe('chat');
  });

  it('null for what is not a request body', () => {
    for (const body of [null, 42, 'text', [], { prompt: 'x' }, { messages: 'x' }, { input: 5 }]) expect(detectProtocol(body)).toBeNull();
  });
});
