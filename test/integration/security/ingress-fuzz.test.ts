import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ClientProtocol } from '../../../src/telemetry/events.js';
import { anthropicMessage, anthropicTextStream } from '../../helpers/anthropic-upstream.js';
import { completion, FakeUpstream, healthyStream } from '../../helpers/fake-upstream.js';
import { waitFor } from '../../helpers/harness.js';
import { ENDPOINT, protocolError } from '../../helpers/protocol-errors.js';
import { type RunningProxy, startProxy } from '../../helpers/proxy.js';

/**
 * The ingress of every client protocol's endpoints under random JSON and random bytes: every
 * answer is a clean 4xx in the endpoint's protocol (or a real answer, when the random body
 * happens to be a valid request), never a 5xx, and the server stays up. Two routes, so bodies are
 * relayed (chat → an OpenAI tier) and translated (every protocol → an Anthropic tier, and
 * responses/messages/ollama → the OpenAI tier).
 */

let openai: FakeUpstream;
let anthropic: FakeUpstream;
let p: RunningProxy;
const stderr: string[] = [];

beforeAll(async () => {
  openai = await FakeUpstream.start();
  openai.always((ctx) => (ctx.body.stream === true ? healthyStream(['fuzz', ' ok'])(ctx) : ctx.json(200, completion('fuzz ok'))));
  anthropic = await FakeUpstream.start();
  anthropic.always((ctx) =>
    ctx.body.stream === true ? anthropicTextStream(['fuzz', ' ok'])(ctx) : ctx.json(200, anthropicMessage([{ type: 'text', text: 'fuzz ok' }])),
  );
  const yaml = [
    'version: 1',
    'server: { port: 0, max_body_bytes: 262144 }',
    'providers:',
    `  oai: { type: openai, base_url: ${openai.url} }`,
    `  ant: { type: anthropic, base_url: ${anthropic.url.replace(/\/v1$/, '')}, api_key: sk-ant-fuzz }`,
    'routes:',
    '  chat:',
    '    tiers: [{ provider: oai, model: m1 }]',
    '  claude:',
    '    tiers: [{ provider: ant, model: claude-x, max_tokens: 64 }]',
    '',
  ].join('\n');
  p = await startProxy(yaml);
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr.push(String(chunk));
    return true;
  });
});

afterAll(async () => {
  vi.restoreAllMocks();
  await p?.close();
  await openai?.close();
  await anthropic?.close();
});

// ---- random bodies: mostly the right shape with garbage here and there, sometimes garbage all through ----

const garbage = fc.jsonValue({ maxDepth: 3 });
/** Mostly `arb`, now and then any JSON at all (rarely enough that many bodies get past validation into translation). */
const field = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<unknown> => fc.oneof({ weight: 15, arbitrary: arb }, { weight: 1, arbitrary: garbage });
const count = fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 1, max: 4096 }) }, { weight: 1, arbitrary: fc.integer({ min: -5, max: 500_000 }) });
const optional = <T extends Record<string, fc.Arbitrary<unknown>>>(shape: T) => fc.record(shape, { requiredKeys: [] });
const text = fc.string({ maxLength: 20 });
const model = fc.constantFrom('chat', 'claude', 'chat', 'claude', 'nope');
const image = fc.constantFrom('data:image/png;base64,iVBORw0KGgo=', 'https://example.com/cat.png', 'data:,', 'not a url');
const schema = field(optional({ type: field(fc.constantFrom('object', 'string')), properties: field(fc.dictionary(text, garbage, { maxKeys: 2 })) }));

const chatPart = optional({
  type: field(fc.constantFrom('text', 'image_url', 'input_audio', 'file', 'refusal')),
  text: field(text),
  image_url: field(optional({ url: field(image) })),
});
const chatToolCall = optional({
  id: field(text),
  type: field(fc.constant('function')),
  function: field(optional({ name: field(text), arguments: field(fc.oneof(text, fc.json())) })),
});
const chatMessage = optional({
  role: field(fc.constantFrom('system', 'developer', 'user', 'assistant', 'tool', 'function', 'bogus')),
  content: field(fc.oneof(text, fc.constant(null), fc.array(chatPart, { maxLength: 3 }))),
  tool_calls: field(fc.array(chatToolCall, { maxLength: 2 })),
  tool_call_id: field(text),
  reasoning_content: field(text),
});
const chatBody = fc.record(
  {
    model: field(model),
    messages: field(fc.array(chatMessage, { maxLength: 4 })),
    stream: field(fc.boolean()),
    stream_options: field(optional({ include_usage: field(fc.boolean()) })),
    tools: field(
      fc.array(
        optional({ type: field(fc.constant('function')), function: field(optional({ name: field(text), description: field(text), parameters: schema })) }),
        { maxLength: 2 },
      ),
    ),
    tool_choice: field(
      fc.oneof(
        fc.constantFrom('auto', 'none', 'required'),
        optional({ type: field(fc.constant('function')), function: field(optional({ name: field(text) })) }),
      ),
    ),
    n: field(fc.integer({ min: -1, max: 3 })),
    max_tokens: field(count),
    max_completion_tokens: field(count),
    temperature: field(fc.double({ noNaN: true, min: -3, max: 3 })),
    stop: field(fc.oneof(text, fc.array(text, { maxLength: 5 }))),
    response_format: garbage,
    reasoning_effort: field(fc.constantFrom('low', 'medium', 'high', 'max')),
  },
  { requiredKeys: ['model', 'messages'] },
);

const responsesItem = optional({
  type: field(fc.constantFrom('message', 'function_call', 'function_call_output', 'reasoning', 'input_text', 'item_reference', 'web_search_call')),
  role: field(fc.constantFrom('user', 'assistant', 'system', 'developer', 'tool')),
  content: field(
    fc.oneof(
      text,
      fc.array(
        optional({
          type: field(fc.constantFrom('input_text', 'output_text', 'input_image', 'input_file', 'refusal')),
          text: field(text),
          image_url: field(image),
        }),
        { maxLength: 3 },
      ),
    ),
  ),
  call_id: field(text),
  name: field(text),
  arguments: field(fc.oneof(text, fc.json())),
  output: field(fc.oneof(text, fc.array(garbage, { maxLength: 2 }))),
  id: field(text),
});
const responsesBody = fc.record(
  {
    model: field(model),
    input: field(fc.oneof(text, fc.array(responsesItem, { maxLength: 4 }))),
    instructions: field(text),
    stream: field(fc.boolean()),
    tools: field(
      fc.array(
        optional({
          type: field(fc.constantFrom('function', 'web_search', 'custom', 'namespace')),
          name: field(text),
          parameters: schema,
          tools: field(fc.array(garbage, { maxLength: 2 })),
        }),
        { maxLength: 2 },
      ),
    ),
    tool_choice: field(fc.oneof(fc.constantFrom('auto', 'none', 'required'), optional({ type: field(fc.constant('function')), name: field(text) }))),
    previous_response_id: field(text),
    max_output_tokens: field(count),
    reasoning: field(optional({ effort: field(fc.constantFrom('low', 'high')), summary: field(text) })),
    store: field(fc.boolean()),
    text: garbage,
  },
  { requiredKeys: ['model', 'input'] },
);

const messagesBlock = optional({
  type: field(fc.constantFrom('text', 'image', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking', 'document', 'server_tool_use')),
  text: field(text),
  source: field(
    optional({
      type: field(fc.constantFrom('base64', 'url')),
      media_type: field(fc.constantFrom('image/png', 'image/gif', 'text/plain')),
      data: field(text),
      url: field(image),
    }),
  ),
  id: field(text),
  name: field(text),
  input: garbage,
  tool_use_id: field(text),
  content: field(fc.oneof(text, fc.array(garbage, { maxLength: 2 }))),
  thinking: field(text),
  signature: field(text),
  is_error: field(fc.boolean()),
  cache_control: field(optional({ type: field(fc.constant('ephemeral')) })),
});
const messagesBody = fc.record(
  {
    model: field(model),
    max_tokens: field(count),
    messages: field(
      fc.array(
        optional({ role: field(fc.constantFrom('user', 'assistant', 'system')), content: field(fc.oneof(text, fc.array(messagesBlock, { maxLength: 3 }))) }),
        { maxLength: 4 },
      ),
    ),
    system: field(fc.oneof(text, fc.array(messagesBlock, { maxLength: 2 }))),
    stream: field(fc.boolean()),
    tools: field(
      fc.array(
        optional({
          name: field(text),
          description: field(text),
          input_schema: schema,
          type: field(fc.constantFrom('custom', 'web_search_20250305', 'bash_20250124')),
        }),
        { maxLength: 2 },
      ),
    ),
    tool_choice: field(optional({ type: field(fc.constantFrom('auto', 'any', 'tool', 'none')), name: field(text) })),
    thinking: field(optional({ type: field(fc.constantFrom('enabled', 'disabled')), budget_tokens: field(fc.integer({ min: -1, max: 5000 })) })),
    stop_sequences: field(fc.array(text, { maxLength: 3 })),
    temperature: field(fc.double({ noNaN: true, min: -3, max: 3 })),
    metadata: garbage,
  },
  { requiredKeys: ['model', 'messages', 'max_tokens'] },
);

const ollamaImages = field(fc.array(fc.constantFrom('iVBORw0KGgo=', '/9j/4AAQ', '', 'not base64'), { maxLength: 2 }));
const ollamaControls = {
  stream: field(fc.boolean()),
  format: field(fc.oneof(fc.constantFrom('json', 'yaml'), schema)),
  think: field(fc.oneof(fc.boolean(), fc.constantFrom('low', 'high', 'max'))),
  options: field(
    optional({
      temperature: field(fc.double({ noNaN: true, min: -3, max: 3 })),
      num_predict: field(fc.oneof(count, fc.constantFrom(-1, -2))),
      num_ctx: field(count),
      stop: field(fc.oneof(text, fc.array(text, { maxLength: 3 }))),
      seed: field(fc.integer()),
    }),
  ),
  keep_alive: field(fc.oneof(text, fc.integer({ min: -1, max: 600 }))),
};
const ollamaMessage = optional({
  role: field(fc.constantFrom('system', 'user', 'assistant', 'tool', 'bogus')),
  content: field(fc.oneof(text, fc.constant(null))),
  images: ollamaImages,
  thinking: field(text),
  tool_calls: field(
    fc.array(
      optional({
        id: field(text),
        function: field(optional({ name: field(text), arguments: field(fc.oneof(fc.dictionary(text, garbage, { maxKeys: 2 }), text)) })),
      }),
      {
        maxLength: 2,
      },
    ),
  ),
  tool_name: field(text),
});
const ollamaBody = fc.record(
  {
    model: field(model),
    messages: field(fc.array(ollamaMessage, { maxLength: 4 })),
    tools: field(
      fc.array(
        optional({ type: field(fc.constant('function')), function: field(optional({ name: field(text), description: field(text), parameters: schema })) }),
        { maxLength: 2 },
      ),
    ),
    ...ollamaControls,
  },
  { requiredKeys: ['model', 'messages'] },
);
const ollamaGenerateBody = fc.record(
  { model: field(model), prompt: field(text), system: field(text), suffix: field(fc.constantFrom('', 'tail')), images: ollamaImages, ...ollamaControls },
  { requiredKeys: ['model'] },
);

const geminiSchema = field(
  optional({
    type: field(fc.constantFrom('OBJECT', 'STRING', 'object', 'ARRAY')),
    properties: field(fc.dictionary(text, garbage, { maxKeys: 2 })),
    nullable: field(fc.boolean()),
    items: garbage,
  }),
);
const geminiPart = optional({
  text: field(text),
  thought: field(fc.boolean()),
  thoughtSignature: field(text),
  inlineData: field(
    optional({ mimeType: field(fc.constantFrom('image/png', 'application/pdf', 'audio/wav')), data: field(fc.constantFrom('iVBORw0KGgo=', '')) }),
  ),
  fileData: field(optional({ mimeType: field(fc.constantFrom('image/png', 'video/mp4')), fileUri: field(image) })),
  functionCall: field(optional({ id: field(text), name: field(text), args: garbage })),
  functionResponse: field(optional({ id: field(text), name: field(text), response: garbage, parts: field(fc.array(garbage, { maxLength: 2 })) })),
});
const geminiContent = optional({
  role: field(fc.constantFrom('user', 'model', 'function', 'system', 'bogus')),
  parts: field(fc.array(geminiPart, { maxLength: 3 })),
});
const geminiBody = fc.record(
  {
    contents: field(fc.array(geminiContent, { maxLength: 4 })),
    systemInstruction: field(fc.oneof(text, optional({ parts: field(fc.array(geminiPart, { maxLength: 2 })) }))),
    tools: field(
      fc.array(
        optional({
          functionDeclarations: field(
            fc.array(optional({ name: field(text), description: field(text), parameters: geminiSchema, parametersJsonSchema: schema }), { maxLength: 2 }),
          ),
          googleSearch: field(fc.constant({})),
        }),
        { maxLength: 2 },
      ),
    ),
    toolConfig: field(
      optional({
        functionCallingConfig: field(
          optional({
            mode: field(fc.constantFrom('AUTO', 'ANY', 'NONE', 'VALIDATED', 'bogus')),
            allowedFunctionNames: field(fc.array(text, { maxLength: 2 })),
          }),
        ),
      }),
    ),
    generationConfig: field(
      optional({
        temperature: field(fc.double({ noNaN: true, min: -3, max: 3 })),
        maxOutputTokens: field(count),
        stopSequences: field(fc.array(text, { maxLength: 3 })),
        candidateCount: field(fc.integer({ min: 0, max: 3 })),
        responseMimeType: field(fc.constantFrom('application/json', 'text/plain', 'text/x.enum')),
        responseSchema: geminiSchema,
        responseJsonSchema: schema,
        thinkingConfig: field(
          optional({
            thinkingBudget: field(fc.integer({ min: -1, max: 30000 })),
            thinkingLevel: field(fc.constantFrom('LOW', 'HIGH', 'bogus')),
            includeThoughts: field(fc.boolean()),
          }),
        ),
      }),
    ),
    safetySettings: garbage,
    cachedContent: field(fc.constantFrom('', 'cachedContents/abc')),
  },
  { requiredKeys: ['contents'] },
);
/** Gemini names the route in the path: every generation and count path, on each route (and one that is none). */
const geminiPath = fc
  .tuple(
    fc.constantFrom('/v1beta', '/v1'),
    fc.constantFrom('chat', 'claude', 'nope', 'models%2Fchat'),
    fc.constantFrom(':generateContent', ':streamGenerateContent?alt=sse', ':streamGenerateContent', ':countTokens'),
  )
  .map(([version, route, method]) => `${version}/models/${route}${method}`);

const BODIES: Record<ClientProtocol, fc.Arbitrary<unknown>> = {
  gemini: fc.oneof({ weight: 5, arbitrary: geminiBody }, { weight: 1, arbitrary: garbage }),
  chat: fc.oneof({ weight: 5, arbitrary: chatBody }, { weight: 1, arbitrary: garbage }),
  responses: fc.oneof({ weight: 5, arbitrary: responsesBody }, { weight: 1, arbitrary: garbage }),
  messages: fc.oneof({ weight: 5, arbitrary: messagesBody }, { weight: 1, arbitrary: garbage }),
  ollama: fc.oneof({ weight: 5, arbitrary: ollamaBody }, { weight: 1, arbitrary: garbage }),
};

// ---- the property ----------------------------------------------------------------------

/** The terminator a complete stream ends with, per protocol. */
const TERMINATOR: Record<ClientProtocol, RegExp> = {
  // No terminator: the last chunk carries the finish reason.
  gemini: /"finishReason":"[A-Z_]+"[^\n]*\r\n\r\n$/,
  chat: /data: \[DONE\]\s*$/,
  responses: /"type":"response\.completed"/,
  messages: /event: message_stop/,
  ollama: /"done":true[^\n]*\n$/,
};

const tally = { answered: { chat: 0, responses: 0, messages: 0, ollama: 0, gemini: 0 } as Record<ClientProtocol, number>, refused: 0 };

/** Sends one body; checks the answer is a clean 4xx in the protocol's shape or a complete answer. */
async function check(protocol: ClientProtocol, body: string | Uint8Array, path = ENDPOINT[protocol]): Promise<void> {
  const res = await fetch(`${p.origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const answer = await res.text();
  const shown = typeof body === 'string' ? body.slice(0, 300) : `${body.length} random bytes`;
  expect(res.status, `${protocol} ${shown} → ${answer.slice(0, 400)}`).toBeLessThan(500);
  if (res.status >= 400) {
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    protocolError(protocol, JSON.parse(answer));
    tally.refused++;
    return;
  }
  tally.answered[protocol]++;
  if (/^(text\/event-stream|application\/x-ndjson)/.test(res.headers.get('content-type') ?? '')) {
    expect(answer, `${protocol} ${shown}`).toMatch(TERMINATOR[protocol]);
  } else {
    expect(() => JSON.parse(answer), `${protocol} ${shown} → ${answer.slice(0, 200)}`).not.toThrow();
  }
}

describe('ingress under random JSON and random bytes', () => {
  for (const protocol of ['chat', 'responses', 'messages', 'ollama'] as const) {
    it(`${ENDPOINT[protocol]}: random request bodies are answered or refused cleanly in its protocol, never a 5xx`, async () => {
      await fc.assert(
        fc.asyncProperty(BODIES[protocol], async (body) => check(protocol, JSON.stringify(body))),
        { numRuns: 250 },
      );
    }, 120_000);
  }

  it('Gemini paths (the route in them, streamed as SSE or one JSON array, counted) under random bodies: answered or refused cleanly, never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(geminiPath, BODIES.gemini, async (path, body) => check('gemini', JSON.stringify(body), path)),
      { numRuns: 250 },
    );
  }, 120_000);

  it('bodies with a deeply nested value spliced in (5,000 levels used to overflow the stack): a clean 4xx or an answer', async () => {
    const protocol = fc.constantFrom<ClientProtocol>('chat', 'responses', 'messages', 'ollama', 'gemini');
    const nested = (depth: number, arrays: boolean) => (arrays ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);
    // The depth is drawn, the text made in the property: a counterexample shows numbers, not megabytes of brackets.
    const cases = protocol.chain((pr) => fc.tuple(fc.constant(pr), BODIES[pr], fc.integer({ min: 500, max: 6000 }), fc.boolean()));
    await fc.assert(
      fc.asyncProperty(cases, async ([pr, body, depth, arrays]) => {
        const text = JSON.stringify(body);
        const deep = nested(depth, arrays);
        await check(pr, text.startsWith('{') && text !== '{}' ? `${text.slice(0, -1)},"metadata":${deep}}` : deep);
      }),
      { numRuns: 60 },
    );
  }, 120_000);

  it('random bytes to every endpoint (count_tokens too): a clean 4xx', async () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 300 }),
      fc.string({ unit: 'binary', maxLength: 200 }).map((s) => new TextEncoder().encode(s)),
      fc.jsonValue({ maxDepth: 2 }).map((v) => new TextEncoder().encode(JSON.stringify(v).slice(0, -1))), // JSON cut short
    );
    const endpoint = fc.constantFrom<[ClientProtocol, string]>(
      ['chat', ENDPOINT.chat],
      ['responses', ENDPOINT.responses],
      ['messages', ENDPOINT.messages],
      ['messages', '/v1/messages/count_tokens'],
      ['ollama', ENDPOINT.ollama],
      ['ollama', '/api/generate'],
      ['ollama', '/api/show'],
      ['gemini', ENDPOINT.gemini],
      ['gemini', '/v1beta/models/chat:streamGenerateContent'],
      ['gemini', '/v1/models/claude:countTokens'],
    );
    await fc.assert(
      fc.asyncProperty(endpoint, bytes, async ([protocol, path], body) => check(protocol, body, path)),
      { numRuns: 300 },
    );
  }, 120_000);

  it('count_tokens under random Messages bodies: answered or a clean 4xx', async () => {
    await fc.assert(
      fc.asyncProperty(BODIES.messages, async (body) => check('messages', JSON.stringify(body), '/v1/messages/count_tokens')),
      { numRuns: 150 },
    );
  }, 120_000);

  it('/api/generate under random Ollama bodies: answered or a clean 4xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof({ weight: 5, arbitrary: ollamaGenerateBody }, { weight: 1, arbitrary: garbage }), async (body) =>
        check('ollama', JSON.stringify(body), '/api/generate'),
      ),
      { numRuns: 150 },
    );
  }, 120_000);

  it('a name that is not text where a codec reads one (`[{"toString":0}]` cannot be made a string), or an inherited one ("constructor"): a clean 4xx or an answer', async () => {
    const odd = [[{ toString: 0 }], { toString: 0 }, 'constructor', '__proto__'];
    for (const model of ['chat', 'claude']) {
      for (const name of odd) {
        await check('chat', JSON.stringify({ model, messages: [{ role: name, content: 'hi' }] }));
        await check('chat', JSON.stringify({ model, messages: [{ role: 'user', content: [{ type: name, text: 'hi' }] }] }));
        await check('responses', JSON.stringify({ model, input: [{ type: name }] }));
        await check('responses', JSON.stringify({ model, input: [{ role: name, content: 'hi' }] }));
        await check('responses', JSON.stringify({ model, input: [{ role: 'user', content: [{ type: name, text: 'hi' }] }] }));
        await check('messages', JSON.stringify({ model, max_tokens: 8, messages: [{ role: name, content: 'hi' }] }));
        await check('messages', JSON.stringify({ model, max_tokens: 8, messages: [{ role: 'user', content: [{ type: name, text: 'hi' }] }] }));
        await check('ollama', JSON.stringify({ model, messages: [{ role: name, content: 'hi' }] }));
        const gemini = `/v1beta/models/${model}:generateContent`;
        await check('gemini', JSON.stringify({ contents: [{ role: name, parts: [{ text: 'hi' }] }] }), gemini);
        await check('gemini', JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi', functionCall: name }] }] }), gemini);
        await check(
          'gemini',
          JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }], toolConfig: { functionCallingConfig: { mode: name } } }),
          gemini,
        );
      }
    }
  });

  it('afterwards: the server is up, nothing is in flight, nothing was reported as an internal error, and both kinds of answer were seen', async () => {
    expect((await fetch(`${p.origin}/healthz`)).status).toBe(200);
    await waitFor(() => p.server.app.inFlight.size === 0 && p.server.app.streams.open === 0, 3000, 'nothing in flight');
    expect(stderr.join('')).not.toMatch(/internal error/);
    // The generators reach past validation, so the codecs' translations were fuzzed too.
    for (const protocol of ['chat', 'responses', 'messages', 'ollama', 'gemini'] as const) expect(tally.answered[protocol], protocol).toBeGreaterThan(10);
    expect(tally.refused).toBeGreaterThan(100);
  });
});
