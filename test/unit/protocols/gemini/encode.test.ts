import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../../src/config/load.js';
import type { Tier } from '../../../../src/config/schema.js';
import { ClientCredential } from '../../../../src/protocols/core/credential.js';
import type { NeutralRequest } from '../../../../src/protocols/core/neutral.js';
import { isUnsupported, type ClientHeaders, type UpstreamRequest } from '../../../../src/protocols/core/types.js';
import { geminiWire } from '../../../../src/protocols/gemini/wire.js';
import { clientCodec } from '../../../../src/protocols/registry.js';
import type { ClientProtocol } from '../../../../src/telemetry/events.js';

// A neutral request as a gemini tier gets it (docs/protocols.md, "a gemini tier"), from the
// bodies real clients send in the other protocols.

const config = loadConfigText(
  `
version: 1
providers:
  gemini: { type: gemini, base_url: "https://generativelanguage.googleapis.com", api_key: AIza-own-key }
  mine: { type: gemini, base_url: "https://gw.example/google", api_key: from_client }
routes:
  r:
    tiers:
      - { name: gemini, provider: gemini, model: gemini-2.5-flash }
      - { name: capped, provider: gemini, model: gemini-2.5-pro, max_tokens: 500 }
      - { name: mine, provider: mine, model: gemini-2.5-flash }
`,
  '/t/llm-route.yaml',
  {},
);
const tiers = Object.fromEntries((config.routes.get('r')?.tiers ?? []).map((t) => [t.name, t])) as Record<string, Tier>;

function neutralOf(client: ClientProtocol, body: Record<string, unknown>): NeutralRequest {
  const parsed = clientCodec(client).parse(body, {});
  if (!parsed.ok) throw new Error(parsed.message);
  const neutral = parsed.request.neutral();
  if (isUnsupported(neutral)) throw new Error(neutral.unsupported);
  return neutral;
}

function encode(client: ClientProtocol, body: Record<string, unknown>, tier = 'gemini', headers: ClientHeaders = {}): UpstreamRequest | string {
  const t = tiers[tier];
  const upstream = geminiWire.encodeRequest(t.provider, t, neutralOf(client, body), body.stream === true, headers);
  return isUnsupported(upstream) ? upstream.unsupported : upstream;
}

function bodyOf(client: ClientProtocol, body: Record<string, unknown>, tier = 'gemini'): Record<string, unknown> {
  const upstream = encode(client, body, tier);
  if (typeof upstream === 'string') throw new Error(upstream);
  return JSON.parse(upstream.body) as Record<string, unknown>;
}

const WEATHER = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

describe('a gemini tier gets', () => {
  it('streams at :streamGenerateContent?alt=sse, whole answers at :generateContent, the key in x-goog-api-key only', () => {
    const stream = encode('chat', { model: 'r', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    const whole = encode('chat', { model: 'r', messages: [{ role: 'user', content: 'hi' }] }, 'capped');
    if (typeof stream === 'string' || typeof whole === 'string') throw new Error('unsupported');
    expect(stream.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    expect(stream.headers).toMatchObject({ 'x-goog-api-key': 'AIza-own-key', accept: 'text/event-stream', 'content-type': 'application/json' });
    expect(stream.headers.authorization).toBeUndefined();
    expect(whole.path).toBe('/v1beta/models/gemini-2.5-pro:generateContent');
  });

  it("a from_client provider gets a Gemini client's own key, and no other API's credential", () => {
    const goog = new ClientCredential('gemini', { 'x-goog-api-key': 'AIza-client' }, ['AIza-client']);
    const mine = encode('chat', { model: 'r', messages: [{ role: 'user', content: 'hi' }] }, 'mine', { credential: goog });
    if (typeof mine === 'string') throw new Error(mine);
    expect(mine.path).toBe('/google/v1beta/models/gemini-2.5-flash:generateContent');
    expect(mine.headers['x-goog-api-key']).toBe('AIza-client');
    const openai = new ClientCredential('openai', { authorization: 'Bearer sk-x' }, ['sk-x']);
    const other = encode('chat', { model: 'r', messages: [{ role: 'user', content: 'hi' }] }, 'mine', { credential: openai });
    if (typeof other === 'string') throw new Error(other);
    expect([other.headers['x-goog-api-key'], other.headers.authorization]).toEqual([undefined, undefined]);
  });

  it('roles user/model, system as systemInstruction, tool calls as functionCall (ids kept, the first signed as Google documents) and results as one functionResponse turn', () => {
    const body = bodyOf('chat', {
      model: 'r',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: 'Use tools.' },
        { role: 'user', content: 'Weather in Oslo and Bergen?' },
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
            { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Bergen"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '5°C' },
        { role: 'tool', tool_call_id: 'call_2', content: '7°C' },
      ],
    });
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }, { text: 'Use tools.' }] });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Oslo and Bergen?' }] },
      {
        role: 'model',
        parts: [
          { text: 'Checking.' },
          { functionCall: { name: 'get_weather', args: { city: 'Oslo' }, id: 'call_1' }, thoughtSignature: 'skip_thought_signature_validator' },
          { functionCall: { name: 'get_weather', args: { city: 'Bergen' }, id: 'call_2' } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_weather', response: { output: '5°C' }, id: 'call_1' } },
          { functionResponse: { name: 'get_weather', response: { output: '7°C' }, id: 'call_2' } },
        ],
      },
    ]);
  });

  it('an Anthropic error result as {error}, images as inlineData, thinking of past turns left out (no signature of another provider)', () => {
    const body = bodyOf('messages', {
      model: 'r',
      max_tokens: 100,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PIXEL } },
            { type: 'text', text: 'run it' },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'I should run it.', signature: 'EqQBCkYIB…anthropic' },
            { type: 'tool_use', id: 'toolu_1', name: 'run', input: { cmd: 'ls' } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', is_error: true, content: 'permission denied' }] },
      ],
    });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ inlineData: { mimeType: 'image/png', data: PIXEL } }, { text: 'run it' }] },
      { role: 'model', parts: [{ functionCall: { name: 'run', args: { cmd: 'ls' }, id: 'toolu_1' }, thoughtSignature: 'skip_thought_signature_validator' }] },
      { role: 'user', parts: [{ functionResponse: { name: 'run', response: { error: 'permission denied' }, id: 'toolu_1' } }] },
    ]);
    expect(JSON.stringify(body)).not.toContain('anthropic');
    expect(body.generationConfig).toEqual({ maxOutputTokens: 100 });
  });

  it('an https image URL as fileData Gemini fetches; one it cannot fetch makes the tier unable to carry the request', () => {
    const image = (url: string) => ({ model: 'r', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }] });
    expect(bodyOf('chat', image('https://example.com/cat.PNG')).contents).toEqual([
      { role: 'user', parts: [{ fileData: { mimeType: 'image/png', fileUri: 'https://example.com/cat.PNG' } }] },
    ]);
    expect(encode('chat', image('http://example.com/cat.png'))).toBe(
      'Gemini fetches image URLs itself, over https from the internet; it cannot fetch http://example.com/…',
    );
    expect(encode('chat', image('https://192.168.1.20/cat.png'))).toMatch(/cannot fetch https:\/\/192\.168\.1\.20\//);
    expect(encode('chat', image('https://localhost/cat.png'))).toMatch(/cannot fetch/);
  });

  it('tools as functionDeclarations with their JSON Schema as parametersJsonSchema (as sent), tool choice as functionCallingConfig', () => {
    const tools = [
      { type: 'function', function: { name: 'get_weather', description: 'Weather now', parameters: WEATHER } },
      { type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {} } } },
    ];
    const message = [{ role: 'user', content: 'hi' }];
    const body = bodyOf('chat', { model: 'r', messages: message, tools, tool_choice: 'required' });
    expect(body.tools).toEqual([
      { functionDeclarations: [{ name: 'get_weather', description: 'Weather now', parametersJsonSchema: WEATHER }, { name: 'now' }] },
    ]);
    expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    const choice = (tool_choice: unknown) => bodyOf('chat', { model: 'r', messages: message, tools, tool_choice }).toolConfig;
    expect(choice('auto')).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    expect(choice('none')).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    expect(choice({ type: 'function', function: { name: 'now' } })).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['now'] } });
    expect(bodyOf('chat', { model: 'r', messages: message }).tools).toBeUndefined();
    // An MCP server's schema names its dialect: the one keyword parametersJsonSchema refuses.
    const mcp = { name: 'search', parameters: { $schema: 'https://json-schema.org/draft/2020-12/schema', ...WEATHER } };
    const declared = bodyOf('chat', { model: 'r', messages: message, tools: [{ type: 'function', function: mcp }] }).tools as Array<{
      functionDeclarations: unknown[];
    }>;
    expect(declared[0].functionDeclarations).toEqual([{ name: 'search', parametersJsonSchema: WEATHER }]);
  });

  it('sampling, stops, seed and max tokens (within the tier cap) in generationConfig; a JSON schema as responseJsonSchema', () => {
    const body = bodyOf(
      'chat',
      {
        model: 'r',
        messages: [{ role: 'user', content: 'hi' }],
        temperature: 0.3,
        top_p: 0.9,
        stop: ['END', 'STOP'],
        seed: 7,
        max_tokens: 2000,
        response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object', properties: { a: { type: 'integer' } } } } },
      },
      'capped',
    );
    expect(body.generationConfig).toEqual({
      temperature: 0.3,
      topP: 0.9,
      maxOutputTokens: 500,
      stopSequences: ['END', 'STOP'],
      seed: 7,
      responseMimeType: 'application/json',
      responseJsonSchema: { type: 'object', properties: { a: { type: 'integer' } } },
    });
    expect(bodyOf('chat', { model: 'r', messages: [{ role: 'user', content: 'hi' }], response_format: { type: 'json_object' } }).generationConfig).toEqual({
      responseMimeType: 'application/json',
    });
  });

  it('a reasoning effort as a thinking budget with the thoughts shown, below maxOutputTokens; none turns thinking off', () => {
    const thinking = (effort: string, max?: number) =>
      (
        bodyOf('chat', { model: 'r', messages: [{ role: 'user', content: 'hi' }], reasoning_effort: effort, max_tokens: max }).generationConfig as Record<
          string,
          unknown
        >
      )?.thinkingConfig;
    expect(thinking('high')).toEqual({ thinkingBudget: 24576, includeThoughts: true });
    expect(thinking('low')).toEqual({ thinkingBudget: 2048, includeThoughts: true });
    expect(thinking('medium', 4000)).toEqual({ thinkingBudget: 3999, includeThoughts: true });
    expect(thinking('none')).toEqual({ thinkingBudget: 0 });
  });

  it('what it cannot carry: several choices, a previous response id, tools of another provider', () => {
    expect(encode('chat', { model: 'r', n: 2, messages: [{ role: 'user', content: 'hi' }] })).toMatch(/n > 1/);
    expect(encode('responses', { model: 'r', input: 'hi', previous_response_id: 'resp_1' })).toMatch(/previous_response_id/);
    expect(
      encode('messages', { model: 'r', max_tokens: 10, tools: [{ type: 'bash_20250124', name: 'bash' }], messages: [{ role: 'user', content: 'ls' }] }),
    ).toMatch(/bash_20250124/);
  });
});
