import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../../src/config/load.js';
import type { Tier } from '../../../../src/config/schema.js';
import { clientCodec, wireCodec } from '../../../../src/protocols/registry.js';
import { isUnsupported, type WireProtocol } from '../../../../src/protocols/core/types.js';
import { budgetOfEffort } from '../../../../src/protocols/translate/reasoning.js';
import type { ClientProtocol } from '../../../../src/telemetry/events.js';

/** Request translation, table-driven: a client's body in one protocol, the body a tier in another protocol gets. */

const config = loadConfigText(
  `
version: 1
providers:
  local: { type: openai, base_url: "http://127.0.0.1:8080/v1" }
  remote: { type: openai, base_url: "https://api.example.com/v1", api_key: k }
  claude: { type: anthropic, base_url: "https://api.anthropic.com", api_key: k }
  ollama: { type: ollama, base_url: "http://127.0.0.1:11434", ollama: { keep_alive: -1 } }
routes:
  r:
    tiers:
      - { name: local, provider: local, model: qwen }
      - { name: remote, provider: remote, model: gpt-x }
      - { name: claude, provider: claude, model: claude-x, max_tokens: 1234 }
      - { name: ollama, provider: ollama, model: llama, ollama: { num_ctx: 8192 } }
`,
  '/t/llm-route.yaml',
  {},
);
const tiers = Object.fromEntries((config.routes.get('r')?.tiers ?? []).map((t) => [t.name, t])) as Record<string, Tier>;
const WIRE_OF: Record<string, WireProtocol> = { local: 'chat', remote: 'chat', claude: 'messages', ollama: 'ollama' };

function translate(client: ClientProtocol, body: Record<string, unknown>, tierName: string): Record<string, unknown> | string {
  const parsed = clientCodec(client).parse(body, {});
  if (!parsed.ok) throw new Error(parsed.message);
  const neutral = parsed.request.neutral();
  if (isUnsupported(neutral)) return neutral.unsupported;
  const tier = tiers[tierName];
  const upstream = wireCodec(WIRE_OF[tierName]).encodeRequest(tier.provider, tier, neutral, body.stream === true, {});
  return isUnsupported(upstream) ? upstream.unsupported : (JSON.parse(upstream.body) as Record<string, unknown>);
}

const TOOL_SCHEMA = { type: 'object', properties: { q: { type: 'string' } } };

describe('chat → messages', () => {
  it('hoists system and developer messages, merges tool results into one user turn, maps tool choice, clamps temperature', () => {
    expect(
      translate(
        'chat',
        {
          model: 'r',
          temperature: 1.5,
          max_completion_tokens: 99,
          stop: 'END',
          tool_choice: 'required',
          parallel_tool_calls: false,
          user: 'u1',
          tools: [{ type: 'function', function: { name: 'find', description: 'd', parameters: TOOL_SCHEMA } }],
          messages: [
            { role: 'system', content: 'sys one' },
            { role: 'developer', content: [{ type: 'text', text: 'dev two' }] },
            { role: 'user', content: 'go' },
            {
              role: 'assistant',
              content: 'calling',
              tool_calls: [
                { id: 'call_1', type: 'function', function: { name: 'find', arguments: '{"q":"a"}' } },
                { id: 'call_2', type: 'function', function: { name: 'find', arguments: '{"q":"b"}' } },
              ],
            },
            { role: 'tool', tool_call_id: 'call_1', content: 'A' },
            { role: 'tool', tool_call_id: 'call_2', content: 'B' },
            {
              role: 'user',
              content: [
                { type: 'text', text: 'and?' },
                { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
              ],
            },
          ],
        },
        'claude',
      ),
    ).toEqual({
      model: 'claude-x',
      max_tokens: 99,
      temperature: 1,
      stop_sequences: ['END'],
      metadata: { user_id: 'u1' },
      system: [
        { type: 'text', text: 'sys one' },
        { type: 'text', text: 'dev two' },
      ],
      tools: [{ name: 'find', description: 'd', input_schema: TOOL_SCHEMA }],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'go' }] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'calling' },
            { type: 'tool_use', id: 'call_1', name: 'find', input: { q: 'a' } },
            { type: 'tool_use', id: 'call_2', name: 'find', input: { q: 'b' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_1', content: [{ type: 'text', text: 'A' }] },
            { type: 'tool_result', tool_use_id: 'call_2', content: [{ type: 'text', text: 'B' }] },
            { type: 'text', text: 'and?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
          ],
        },
      ],
    });
  });

  it('gives max_tokens from the tier when the client set none, and refuses what Anthropic cannot carry', () => {
    expect(translate('chat', { model: 'r', messages: [{ role: 'user', content: 'x' }] }, 'claude')).toMatchObject({ max_tokens: 1234 });
    // A tier's max_tokens is also the most a request gets of it (Claude Code asks for 128k).
    expect(translate('chat', { model: 'r', max_tokens: 128000, messages: [{ role: 'user', content: 'x' }] }, 'claude')).toMatchObject({ max_tokens: 1234 });
    expect(translate('chat', { model: 'r', n: 3, messages: [{ role: 'user', content: 'x' }] }, 'claude')).toMatch(/n > 1/);
    expect(
      translate(
        'chat',
        { model: 'r', response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } }, messages: [{ role: 'user', content: 'x' }] },
        'claude',
      ),
    ).toMatch(/json_schema/);
    expect(translate('chat', { model: 'r', messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: {} }] }] }, 'claude')).toMatch(
      /input_audio/,
    );
  });
});

describe('messages → chat', () => {
  it('keeps tool ids, marks no thinking (chat has no place for it), sends images as data URLs and tool results as tool messages', () => {
    const body = translate(
      'messages',
      {
        model: 'r',
        max_tokens: 50,
        stream: true,
        system: [{ type: 'text', text: 'be kind', cache_control: { type: 'ephemeral' } }],
        tool_choice: { type: 'tool', name: 'find' },
        tools: [{ name: 'find', input_schema: TOOL_SCHEMA, cache_control: { type: 'ephemeral' } }],
        messages: [
          { role: 'user', content: 'go' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'private', signature: 'sig' },
              { type: 'tool_use', id: 'toolu_1', name: 'find', input: { q: 'a' } },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_1', is_error: true, content: 'boom' },
              { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: 'BBBB' } },
            ],
          },
        ],
      },
      'remote',
    );
    expect(body).toEqual({
      model: 'gpt-x',
      max_completion_tokens: 50,
      stream: true,
      stream_options: { include_usage: true },
      tools: [{ type: 'function', function: { name: 'find', parameters: TOOL_SCHEMA } }],
      tool_choice: { type: 'function', function: { name: 'find' } },
      messages: [
        { role: 'system', content: 'be kind' },
        { role: 'user', content: 'go' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'find', arguments: '{"q":"a"}' } }] },
        { role: 'tool', tool_call_id: 'toolu_1', content: 'boom' },
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/jpeg;base64,BBBB' } }] },
      ],
    });
  });

  it("puts Claude Code's mid-conversation system turns with the system prompt", () => {
    expect(
      translate(
        'messages',
        {
          model: 'r',
          max_tokens: 9,
          system: [{ type: 'text', text: 'base' }],
          messages: [
            { role: 'user', content: 'ctx' },
            { role: 'system', content: [{ type: 'text', text: '# Environment', cache_control: { type: 'ephemeral' } }] },
            { role: 'user', content: 'go' },
          ],
        },
        'local',
      ),
    ).toMatchObject({
      messages: [
        { role: 'system', content: 'base\n\n# Environment' },
        { role: 'user', content: 'ctx' },
        { role: 'user', content: 'go' },
      ],
    });
  });

  it("uses max_tokens for a loopback server, leaves out Anthropic's server tools and refuses its client tools", () => {
    expect(translate('messages', { model: 'r', max_tokens: 7, messages: [{ role: 'user', content: 'x' }] }, 'local')).toMatchObject({ max_tokens: 7 });
    const withServerTool = translate(
      'messages',
      {
        model: 'r',
        max_tokens: 7,
        tools: [
          { type: 'web_search_20250305', name: 'web_search' },
          { name: 'mine', input_schema: TOOL_SCHEMA },
        ],
        messages: [{ role: 'user', content: 'x' }],
      },
      'local',
    );
    expect(withServerTool).toMatchObject({ tools: [{ type: 'function', function: { name: 'mine', parameters: TOOL_SCHEMA } }] });
    expect(
      translate(
        'messages',
        {
          model: 'r',
          max_tokens: 7,
          tools: [{ type: 'text_editor_20250728', name: 'str_replace_based_edit_tool' }],
          messages: [{ role: 'user', content: 'x' }],
        },
        'local',
      ),
    ).toMatch(/tools of type text_editor_20250728/);
  });
});

describe('reasoning history', () => {
  it('sends Anthropic only the thinking Anthropic signed: unsigned reasoning from another protocol is left out', () => {
    const fromChat = translate(
      'chat',
      {
        model: 'r',
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: 'y', reasoning_content: 'unsigned thoughts' },
          { role: 'user', content: 'z' },
        ],
      },
      'claude',
    ) as { messages: Array<{ content: unknown[] }> };
    expect(JSON.stringify(fromChat.messages)).not.toContain('unsigned thoughts');
    expect(fromChat.messages[1].content).toEqual([{ type: 'text', text: 'y' }]);
    const fromMessages = translate(
      'messages',
      {
        model: 'r',
        max_tokens: 5,
        messages: [
          { role: 'user', content: 'x' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'signed', signature: 'SIG' },
              { type: 'redacted_thinking', data: 'opaque' },
              { type: 'text', text: 'y' },
            ],
          },
          { role: 'user', content: 'z' },
        ],
      },
      'claude',
    ) as { messages: Array<{ content: unknown[] }> };
    expect(fromMessages.messages[1].content).toEqual([
      { type: 'thinking', thinking: 'signed', signature: 'SIG' },
      { type: 'redacted_thinking', data: 'opaque' },
      { type: 'text', text: 'y' },
    ]);
  });
});

describe('responses → chat, messages and ollama', () => {
  const body = {
    model: 'r',
    instructions: 'agent rules',
    max_output_tokens: 300,
    temperature: 0.3,
    text: { format: { type: 'json_object' } },
    tools: [{ type: 'function', name: 'sh', parameters: TOOL_SCHEMA, strict: true }],
    input: [
      { role: 'user', content: [{ type: 'input_text', text: 'run it' }] },
      { type: 'function_call', call_id: 'call_9', name: 'sh', arguments: '{"q":"ls"}' },
      { type: 'function_call_output', call_id: 'call_9', output: 'file.txt' },
    ],
  };

  it('to chat', () => {
    expect(translate('responses', body, 'remote')).toEqual({
      model: 'gpt-x',
      max_completion_tokens: 300,
      temperature: 0.3,
      response_format: { type: 'json_object' },
      tools: [{ type: 'function', function: { name: 'sh', parameters: TOOL_SCHEMA, strict: true } }],
      messages: [
        { role: 'system', content: 'agent rules' },
        { role: 'user', content: 'run it' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'sh', arguments: '{"q":"ls"}' } }] },
        { role: 'tool', tool_call_id: 'call_9', content: 'file.txt' },
      ],
    });
  });

  it("to ollama, with the tier's num_ctx and the provider's keep_alive as written, tool results named", () => {
    expect(translate('responses', body, 'ollama')).toEqual({
      model: 'llama',
      stream: false,
      format: 'json',
      keep_alive: -1,
      options: { temperature: 0.3, num_predict: 300, num_ctx: 8192 },
      tools: [{ type: 'function', function: { name: 'sh', parameters: TOOL_SCHEMA } }],
      messages: [
        { role: 'system', content: 'agent rules' },
        { role: 'user', content: 'run it' },
        { role: 'assistant', content: '', tool_calls: [{ function: { name: 'sh', arguments: { q: 'ls' } } }] },
        { role: 'tool', tool_name: 'sh', content: 'file.txt' },
      ],
    });
  });

  it('to messages', () => {
    expect(translate('responses', body, 'claude')).toMatchObject({
      system: 'agent rules',
      max_tokens: 300,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'run it' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'call_9', name: 'sh', input: { q: 'ls' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_9', content: [{ type: 'text', text: 'file.txt' }] }] },
      ],
    });
  });

  it('flattens namespaced tools (Codex), takes tools from additional_tools items, leaves out tools that run at OpenAI', () => {
    const fn = (name: string) => ({ type: 'function', name, parameters: TOOL_SCHEMA });
    expect(
      translate(
        'responses',
        {
          model: 'r',
          tools: [
            fn('exec_command'),
            { type: 'namespace', name: 'multi_agent_v1', description: 'agents', tools: [fn('spawn_agent')] },
            { type: 'web_search', external_web_access: false },
          ],
          input: [
            { type: 'additional_tools', role: 'developer', tools: [{ type: 'namespace', name: 'clock', tools: [fn('sleep')] }] },
            { role: 'user', content: 'hi' },
          ],
        },
        'remote',
      ),
    ).toMatchObject({
      tools: ['exec_command', 'spawn_agent', 'sleep'].map((name) => ({ type: 'function', function: { name, parameters: TOOL_SCHEMA } })),
      messages: [{ role: 'user', content: 'hi' }],
    });
  });

  it('refuses what only a Responses server can do: previous_response_id, custom and local_shell tools, item references', () => {
    expect(translate('responses', { model: 'r', input: 'x', previous_response_id: 'resp_1' }, 'remote')).toMatch(/previous_response_id/);
    expect(translate('responses', { model: 'r', input: 'x', tools: [{ type: 'custom', name: 'exec', format: { type: 'grammar' } }] }, 'claude')).toMatch(
      /tools of type custom/,
    );
    expect(translate('responses', { model: 'r', input: 'x', tools: [{ type: 'local_shell' }] }, 'ollama')).toMatch(/tools of type local_shell/);
    expect(translate('responses', { model: 'r', input: [{ type: 'item_reference', id: 'x' }] }, 'ollama')).toMatch(/item_reference/);
  });
});

describe('structured output and reasoning controls across vendors', () => {
  const schema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] };
  const messagesBody = {
    model: 'r',
    max_tokens: 4000,
    thinking: { type: 'enabled', budget_tokens: 8000 },
    metadata: { user_id: 'x'.repeat(150) },
    output_config: { format: { type: 'json_schema', schema } },
    messages: [{ role: 'user', content: 'x' }],
  };

  it('Anthropic output_config.format and thinking onto a llama.cpp (chat) tier and an Ollama tier; no user from metadata', () => {
    expect(translate('messages', messagesBody, 'local')).toEqual({
      model: 'qwen',
      max_tokens: 4000,
      messages: [{ role: 'user', content: 'x' }],
      response_format: { type: 'json_schema', json_schema: { name: 'response', schema } },
      reasoning_effort: 'medium',
    });
    expect(translate('messages', messagesBody, 'ollama')).toMatchObject({ format: schema, think: 'medium' });
    expect(translate('messages', messagesBody, 'ollama')).not.toHaveProperty('user');
  });

  it('chat json_schema onto Anthropic as the forced answer tool', () => {
    expect(
      translate(
        'chat',
        { model: 'r', response_format: { type: 'json_schema', json_schema: { name: 'x', schema } }, messages: [{ role: 'user', content: 'x' }] },
        'claude',
      ),
    ).toMatchObject({
      tools: [{ name: 'json_answer', input_schema: schema }],
      tool_choice: { type: 'tool', name: 'json_answer' },
    });
  });
});

describe('an effort that is no effort', () => {
  it('an inherited name ("constructor", "toString") gets no thinking budget, a known one its own', () => {
    expect(budgetOfEffort('constructor', 4096)).toBeUndefined();
    expect(budgetOfEffort('toString', 4096)).toBeUndefined();
    expect(budgetOfEffort('low', 4096)).toBe(2048);
  });
});
