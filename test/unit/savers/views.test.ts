import { describe, expect, it } from 'vitest';
import { contentTokens, viewOf } from '../../../src/savers/view.js';
import type { ViewMessage } from '../../../src/savers/types.js';

const IMAGE = { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } };

function chatBody() {
  return {
    model: 'chat',
    temperature: 0.2,
    x_vendor: { keep: ['me'] },
    messages: [
      { role: 'system', content: 'You are helpful.' },
      { role: 'developer', content: [{ type: 'text', text: 'Developer rules.' }] },
      { role: 'user', content: [{ type: 'text', text: 'What is in the file?' }, IMAGE], name: 'ann' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read', arguments: '{"path":"a.txt"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"lines": 3}' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Three lines.' },
          { type: 'refusal', refusal: 'no' },
        ],
      },
    ],
  };
}

function summary(messages: readonly ViewMessage[]) {
  return messages.map((m) => ({
    role: m.role,
    path: m.path,
    parts: m.parts.map((p) => [p.path, p.text, p.toolResult]),
    calls: m.calls,
    answers: m.answers,
    fixed: m.fixedTexts,
  }));
}

describe('the Chat Completions view', () => {
  it('lists roles, text slots with their paths, tool calls and the results answering them', () => {
    const view = viewOf('chat', chatBody())!;
    expect(summary(view.messages)).toEqual([
      { role: 'system', path: 'messages[0]', parts: [['messages[0].content', 'You are helpful.', undefined]], calls: [], answers: [], fixed: [] },
      { role: 'system', path: 'messages[1]', parts: [['messages[1].content[0].text', 'Developer rules.', undefined]], calls: [], answers: [], fixed: [] },
      { role: 'user', path: 'messages[2]', parts: [['messages[2].content[0].text', 'What is in the file?', undefined]], calls: [], answers: [], fixed: [] },
      { role: 'assistant', path: 'messages[3]', parts: [], calls: ['call_1'], answers: [], fixed: ['{"path":"a.txt"}'] },
      { role: 'tool', path: 'messages[4]', parts: [['messages[4].content', '{"lines": 3}', 'call_1']], calls: [], answers: ['call_1'], fixed: [] },
      { role: 'assistant', path: 'messages[5]', parts: [['messages[5].content[0].text', 'Three lines.', undefined]], calls: [], answers: [], fixed: [] },
    ]);
  });

  it('rewrites and drops in place; everything else (images, names, unknown fields) is kept as it was', () => {
    const body = chatBody();
    const view = viewOf('chat', body)!;
    const [, developer, user, call, , answer] = view.messages;
    view.apply([
      { kind: 'rewrite', part: user.parts[0], text: 'File?' },
      { kind: 'drop_part', part: developer.parts[0] },
      { kind: 'rewrite', part: answer.parts[0], text: '3.' },
    ]);
    view.apply([
      { kind: 'drop_message', message: call },
      { kind: 'drop_message', message: view.messages[4] },
    ]);
    const expected = chatBody();
    expected.messages[2].content = [{ type: 'text', text: 'File?' }, IMAGE];
    (expected.messages[5].content as unknown[])[0] = { type: 'text', text: '3.' };
    expected.messages.splice(3, 2);
    expected.messages.splice(1, 1);
    expect(view.finish()).toEqual(expected);
  });

  it('legacy function_call and function messages pair up; a non-object message is kept as "other"', () => {
    const view = viewOf('chat', {
      messages: [{ role: 'assistant', content: null, function_call: { name: 'f', arguments: '{}' } }, { role: 'function', name: 'f', content: 'result' }, 42],
    })!;
    expect(view.messages.map((m) => [m.role, m.calls, m.answers])).toEqual([
      ['assistant', ['function_call@0'], []],
      ['tool', [], ['function_call@0']],
      ['other', [], []],
    ]);
  });

  it('an undoable apply: undo restores texts and drops', () => {
    const body = chatBody();
    const view = viewOf('chat', body)!;
    const undo = view.apply([
      { kind: 'rewrite', part: view.messages[0].parts[0], text: 'x' },
      { kind: 'drop_message', message: view.messages[5] },
    ]);
    expect(view.messages).toHaveLength(5);
    undo();
    expect(view.messages).toHaveLength(6);
    expect(view.finish()).toEqual(chatBody());
  });

  it('refuses edits it cannot honour, leaving nothing applied', () => {
    const view = viewOf('chat', chatBody())!;
    const other = viewOf('chat', chatBody())!;
    expect(() =>
      view.apply([
        { kind: 'rewrite', part: view.messages[2].parts[0], text: 'x' },
        { kind: 'drop_message', message: view.messages[0] },
      ]),
    ).toThrow(/system/);
    expect(() => view.apply([{ kind: 'drop_part', part: view.messages[2].parts[0] }])).toThrow(/only system/);
    expect(() => view.apply([{ kind: 'rewrite', part: other.messages[2].parts[0], text: 'x' }])).toThrow(/not in this request/);
    expect(() => view.apply([{ kind: 'rewrite', part: { text: 'a', path: 'fake', toolResult: undefined }, text: 'x' }])).toThrow(/not in this request/);
    expect(view.finish()).toEqual(chatBody());
  });
});

function messagesBody() {
  return {
    model: 'claude',
    max_tokens: 1024,
    metadata: { user_id: 'u1' },
    system: [
      { type: 'text', text: 'You are Claude Code.', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'Project rules.' },
    ],
    messages: [
      { role: 'user', content: 'Run the tests.' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'I should run them.', signature: 'sig==' },
          { type: 'text', text: 'Running.' },
          { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'npm test' } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_1',
            content: [
              { type: 'text', text: 'PASS 12 tests' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBOR' } },
            ],
            cache_control: { type: 'ephemeral' },
          },
          { type: 'text', text: 'And now?', cache_control: { type: 'ephemeral', ttl: '1h' } },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_2', name: 'Read', input: { path: 'a' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: 'file body', is_error: false }] },
    ],
  };
}

describe('the Anthropic Messages view', () => {
  it('system blocks, text blocks, tool_use ids and the tool_result blocks answering them', () => {
    const view = viewOf('messages', messagesBody())!;
    expect(summary(view.messages)).toEqual([
      {
        role: 'system',
        path: 'system',
        parts: [
          ['system[0].text', 'You are Claude Code.', undefined],
          ['system[1].text', 'Project rules.', undefined],
        ],
        calls: [],
        answers: [],
        fixed: [],
      },
      { role: 'user', path: 'messages[0]', parts: [['messages[0].content', 'Run the tests.', undefined]], calls: [], answers: [], fixed: [] },
      {
        role: 'assistant',
        path: 'messages[1]',
        parts: [['messages[1].content[1].text', 'Running.', undefined]],
        calls: ['toolu_1'],
        answers: [],
        fixed: ['{"command":"npm test"}'],
      },
      {
        role: 'user',
        path: 'messages[2]',
        parts: [
          ['messages[2].content[0].content[0].text', 'PASS 12 tests', 'toolu_1'],
          ['messages[2].content[1].text', 'And now?', undefined],
        ],
        calls: [],
        answers: ['toolu_1'],
        fixed: [],
      },
      { role: 'assistant', path: 'messages[3]', parts: [], calls: ['toolu_2'], answers: [], fixed: ['{"path":"a"}'] },
      { role: 'user', path: 'messages[4]', parts: [['messages[4].content[0].content', 'file body', 'toolu_2']], calls: [], answers: ['toolu_2'], fixed: [] },
    ]);
  });

  it('cache_control, thinking signatures, images and unknown fields survive rewrites and drops', () => {
    const view = viewOf('messages', messagesBody())!;
    const [system, , , toolUser, call, result] = view.messages;
    view.apply([
      { kind: 'rewrite', part: system.parts[0], text: 'You are Claude.' },
      { kind: 'drop_part', part: system.parts[1] },
      { kind: 'rewrite', part: toolUser.parts[0], text: 'PASS' },
      { kind: 'rewrite', part: toolUser.parts[1], text: 'Next?' },
      { kind: 'rewrite', part: result.parts[0], text: 'body' },
    ]);
    const expected = messagesBody();
    expected.system[0] = { type: 'text', text: 'You are Claude.', cache_control: { type: 'ephemeral' } };
    const blocks = expected.messages[2].content as Array<Record<string, unknown>>;
    (blocks[0].content as Array<Record<string, unknown>>)[0].text = 'PASS';
    blocks[1].text = 'Next?';
    (expected.messages[4].content as Array<Record<string, unknown>>)[0].content = 'body';
    expect(structuredClone(view.body)).toEqual(expected); // rewrites are in place already; drops wait for finish
    view.apply([
      { kind: 'drop_message', message: call },
      { kind: 'drop_message', message: result },
    ]);
    expected.messages.splice(3, 2);
    expected.system.splice(1, 1);
    expect(view.finish()).toEqual(expected);
  });

  it('a system string, and dropping every system block, remove the `system` key', () => {
    const one = viewOf('messages', { system: 'Only.', messages: [] })!;
    one.apply([{ kind: 'drop_part', part: one.messages[0].parts[0] }]);
    expect(one.finish()).toEqual({ messages: [] });
    const two = viewOf('messages', {
      system: [
        { type: 'text', text: 'a' },
        { type: 'text', text: 'b' },
      ],
      messages: [],
    })!;
    two.apply(two.messages[0].parts.map((part) => ({ kind: 'drop_part' as const, part })));
    expect(two.finish()).toEqual({ messages: [] });
  });
});

function responsesBody() {
  return {
    model: 'gpt',
    store: false,
    instructions: 'Be brief.',
    tools: [{ type: 'function', name: 'read', parameters: {} }],
    input: [
      { role: 'developer', content: 'Repo rules.' },
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'Read a.' },
          { type: 'input_image', image_url: 'https://x/y.png', detail: 'auto' },
        ],
      },
      { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Need to read.' }], encrypted_content: 'enc' },
      { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'read', arguments: '{"p":"a"}', status: 'completed' },
      { type: 'function_call_output', call_id: 'call_1', output: '{ "size": 1 }' },
      { type: 'custom_tool_call', call_id: 'call_2', name: 'patch', input: '*** patch' },
      {
        type: 'custom_tool_call_output',
        call_id: 'call_2',
        output: [
          { type: 'input_text', text: 'applied' },
          { type: 'input_image', file_id: 'f1' },
        ],
      },
      { type: 'web_search_call', id: 'ws_1', status: 'completed' },
      { type: 'message', role: 'assistant', id: 'msg_1', status: 'completed', content: [{ type: 'output_text', text: 'Size 1.', annotations: [] }] },
      { type: 'item_reference', id: 'msg_0' },
    ],
  };
}

describe('the Responses view', () => {
  it('instructions, message items, reasoning (kept with its call), calls by call_id and their outputs', () => {
    const view = viewOf('responses', responsesBody())!;
    expect(view.messages.map((m) => [m.role, m.path, m.parts.map((p) => [p.path, p.toolResult]), m.calls, m.answers, m.fixedTexts, m.stickyNext])).toEqual([
      ['system', 'instructions', [['instructions', undefined]], [], [], [], false],
      ['system', 'input[0]', [['input[0].content', undefined]], [], [], [], false],
      ['user', 'input[1]', [['input[1].content[0].text', undefined]], [], [], [], false],
      ['assistant', 'input[2]', [], [], [], [], true],
      ['assistant', 'input[3]', [], ['call_1'], [], ['{"p":"a"}'], false],
      ['tool', 'input[4]', [['input[4].output', 'call_1']], [], ['call_1'], [], false],
      ['assistant', 'input[5]', [], ['call_2'], [], ['*** patch'], false],
      ['tool', 'input[6]', [['input[6].output[0].text', 'call_2']], [], ['call_2'], [], false],
      ['other', 'input[7]', [], [], [], [], false],
      ['assistant', 'input[8]', [['input[8].content[0].text', undefined]], [], [], [], false],
      ['other', 'input[9]', [], [], [], [], false],
    ]);
  });

  it('a string input is one user message; rewrites keep ids, statuses, images and unknown fields', () => {
    const simple = viewOf('responses', { input: 'Hello   there', instructions: 'Sys' })!;
    expect(simple.messages.map((m) => [m.role, m.parts[0].path])).toEqual([
      ['system', 'instructions'],
      ['user', 'input'],
    ]);
    const view = viewOf('responses', responsesBody())!;
    view.apply([
      { kind: 'rewrite', part: view.messages[5].parts[0], text: '{"size":1}' },
      { kind: 'rewrite', part: view.messages[9].parts[0], text: '1.' },
      { kind: 'drop_part', part: view.messages[1].parts[0] },
    ]);
    view.apply([3, 4, 5].map((i) => ({ kind: 'drop_message' as const, message: view.messages[i] })));
    const expected = responsesBody();
    (expected.input[8].content as Array<Record<string, unknown>>)[0].text = '1.';
    expected.input.splice(2, 3);
    expected.input.splice(0, 1);
    expect(view.finish()).toEqual(expected);
  });
});

describe('contentTokens', () => {
  it('counts every text slot and tool-call argument on its own, and reads the body without changing it', () => {
    const body = messagesBody();
    const texts: string[] = [];
    const tokens = contentTokens('messages', body, (text) => {
      texts.push(text);
      return text.length;
    });
    expect(texts).toEqual([
      'You are Claude Code.',
      'Project rules.',
      'Run the tests.',
      'Running.',
      '{"command":"npm test"}',
      'PASS 12 tests',
      'And now?',
      '{"path":"a"}',
      'file body',
    ]);
    expect(tokens).toBe(texts.join('').length);
    expect(body).toEqual(messagesBody());
    expect(contentTokens('chat', { not: 'a conversation' }, () => 1)).toBe(0);
  });
});

describe('every view, with names that are not text or are inherited', () => {
  // `String([{ toString: 0 }])` throws, and a table's lookup of "constructor" finds Object's own:
  // both are a body's to send, and each is simply a message of no known role.
  const odd = [[{ toString: 0 }], { toString: 0 }, 'constructor', '__proto__', 'toString'];
  const bodies = (name: unknown): Array<['chat' | 'responses' | 'messages' | 'ollama', Record<string, unknown>]> => [
    [
      'chat',
      {
        model: 'm',
        messages: [
          { role: name, content: 'hi' },
          { role: 'user', content: [{ type: name, text: 'x' }] },
        ],
      },
    ],
    ['responses', { model: 'm', input: [{ role: name, content: 'hi' }] }],
    ['messages', { model: 'm', max_tokens: 8, messages: [{ role: name, content: [{ type: name, id: 'x' }] }] }],
    ['ollama', { model: 'm', messages: [{ role: name, content: 'hi' }] }],
  ];
  it.each(odd.map((name) => [JSON.stringify(name), name]))('role or type %s: the message is "other", nothing throws', (_, name) => {
    for (const [protocol, body] of bodies(name)) {
      const view = viewOf(protocol, body);
      expect(view, protocol).not.toBeNull();
      expect(view?.messages[0].role, protocol).toBe('other');
    }
  });
});
