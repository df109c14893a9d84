import { describe, expect, it } from 'vitest';
import { ChatBodySchema, isPlainChatBody } from '../../../../src/protocols/chat/schema.js';
import { isPlainMessagesBody, MessagesBodySchema } from '../../../../src/protocols/messages/schema.js';
import { isPlainResponsesBody, ResponsesBodySchema } from '../../../../src/protocols/responses/schema.js';

// The fast checks may say "not plain" to a valid body (zod then judges it), never "plain" to an invalid one.
const values: unknown[] = [
  undefined,
  null,
  true,
  false,
  0,
  1,
  2.5,
  -1,
  4096,
  Number.MAX_SAFE_INTEGER + 2,
  '',
  'x',
  [],
  {},
  [1],
  ['a'],
  [{}],
  [{ type: 'text' }],
  [{ type: 1 }],
  [{ role: 'user' }],
  [{ role: 'user', content: 'hi' }],
  [{ role: 'user', content: [{ type: 'text', text: 'a' }] }],
  [{ role: 'user', content: [{}] }],
  [{ role: 2 }],
  [null],
  { include_usage: true },
  { include_usage: 'yes' },
];
const keys = ['model', 'messages', 'input', 'stream', 'stream_options', 'system', 'max_tokens', 'instructions'];

/** Bodies built from the values above: each key absent or one of the values, on a valid base. */
function* bodies(): Generator<unknown> {
  const base = { model: 'm', messages: [{ role: 'user', content: 'hi' }], input: 'hi' };
  yield* values;
  for (const key of keys) for (const value of values) yield { ...base, [key]: value };
  for (const a of values) for (const b of values) yield { model: a, messages: b, input: b };
}

describe('plain body checks', () => {
  for (const [name, schema, plain] of [
    ['chat', ChatBodySchema, isPlainChatBody],
    ['messages', MessagesBodySchema, isPlainMessagesBody],
    ['responses', ResponsesBodySchema, isPlainResponsesBody],
  ] as const) {
    it(`${name}: a body the fast check passes is one zod accepts, and the usual bodies pass it`, () => {
      let passed = 0;
      for (const body of bodies()) {
        if (!plain(body)) continue;
        passed++;
        expect(schema.safeParse(body).success, JSON.stringify(body)).toBe(true);
      }
      expect(passed).toBeGreaterThan(10);
      expect(plain({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }], input: [{ role: 'user' }] })).toBe(true);
    });
  }
});
