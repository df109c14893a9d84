import { describe, expect, it } from 'vitest';
import { contentTokens } from '../../../src/savers/view.js';
import { tokenCounter } from '../../../src/tokens/count.js';
import { anthropicMessage } from '../../helpers/anthropic-upstream.js';
import { completion } from '../../helpers/fake-upstream.js';
import { logLine, useHarness } from '../../helpers/harness.js';
import { configYaml } from '../../helpers/proxy.js';

const h = useHarness();

const BIG_JSON = JSON.stringify({ files: Array.from({ length: 60 }, (_, i) => ({ path: `src/file-${i}.ts`, size: i * 100, lines: i * 7 })) }, null, 2);
const LOG = Array.from({ length: 400 }, (_, i) => `line ${i}: compiling module ${i} ... ok`).join('\n');

function withSavers(url: string, type: 'openai' | 'anthropic' = 'openai'): string {
  const yaml = configYaml({ tiers: [{ name: 'local', url, type }] });
  return yaml.replace('  chat:\n', '  chat:\n    savers: [whitespace, minify_tool_json, { truncate_tool_output: { max_tokens: 2000 } }]\n');
}

describe('token savers on the request path', () => {
  it('the upstream counts exactly the tokens the log says were sent (chat), and the saving is the difference', async () => {
    const counter = await tokenCounter();
    const upstream = await h.fake();
    let counted = -1;
    upstream.always((ctx) => {
      counted = contentTokens('chat', ctx.body, counter.count);
      ctx.json(200, completion('ok', { prompt_tokens: counted, completion_tokens: 1 }));
    });
    const proxy = await h.proxy(withSavers(upstream.url));
    const body = {
      model: 'chat',
      messages: [
        { role: 'system', content: 'You   are    a helpful\n\n\n\n\nassistant.' },
        { role: 'user', content: 'list the files' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'ls', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: BIG_JSON },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'build', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_2', content: LOG },
        { role: 'user', content: 'and?' },
      ],
    };
    const res = await fetch(`${proxy.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    const line = await logLine(proxy, res.headers.get('x-request-id'));
    const savers = line.savers as Array<{ saver: string; before: number; after: number }>;
    expect(savers.map((s) => s.saver)).toEqual(['whitespace', 'minify_tool_json', 'truncate_tool_output']);
    const before = contentTokens('chat', body, counter.count);
    expect(savers[0].before).toBe(before);
    expect(savers.at(-1)?.after).toBe(counted);
    expect(line.prompt_tokens_upstream).toBe(counted);
    // Each saver starts where the last one ended, and each saved something here.
    for (let i = 1; i < savers.length; i++) expect(savers[i].before).toBe(savers[i - 1].after);
    for (const saver of savers) expect(saver.after).toBeLessThan(saver.before);
    const sent = upstream.requests[0].body.messages as Array<{ content: string }>;
    expect(sent[0].content).not.toMatch(/ {2}/);
    expect(sent[3].content).toBe(JSON.stringify(JSON.parse(BIG_JSON)));
    expect(sent[5].content).toMatch(/truncated/);
  });

  it('works the same on a Messages request relayed to an anthropic tier, cache_control kept', async () => {
    const counter = await tokenCounter();
    const upstream = await h.fake();
    let counted = -1;
    upstream.always((ctx) => {
      counted = contentTokens('messages', ctx.body, counter.count);
      ctx.json(200, anthropicMessage([{ type: 'text', text: 'ok' }]));
    });
    const proxy = await h.proxy(withSavers(`http://127.0.0.1:${upstream.port}`, 'anthropic'));
    const body = {
      model: 'chat',
      max_tokens: 20,
      system: [{ type: 'text', text: 'Be    brief.\n\n\n\nVery   brief.', cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'user', content: 'ls' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'ls', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: BIG_JSON, cache_control: { type: 'ephemeral' } }] },
      ],
    };
    const res = await fetch(`${proxy.origin}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status).toBe(200);
    const line = await logLine(proxy, res.headers.get('x-request-id'));
    const savers = line.savers as Array<{ saver: string; before: number; after: number }>;
    expect(savers.at(-1)?.after).toBe(counted);
    expect(savers[0].before).toBe(contentTokens('messages', body, counter.count));
    const sent = upstream.requests[0].body as { system: Array<{ cache_control?: unknown }>; messages: Array<{ content: Array<{ cache_control?: unknown }> }> };
    expect(sent.system[0].cache_control).toEqual({ type: 'ephemeral' });
    expect(sent.messages[2].content[0].cache_control).toEqual({ type: 'ephemeral' });
  });

  it('a route without savers sends the body untouched and logs no savers', async () => {
    const upstream = await h.fake();
    upstream.always((ctx) => ctx.json(200, completion('ok')));
    const proxy = await h.proxy({ tiers: [{ name: 'local', url: upstream.url }] });
    const content = 'spaces   stay    here\n\n\n\n';
    const res = await fetch(`${proxy.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content }] }),
    });
    const line = await logLine(proxy, res.headers.get('x-request-id'));
    expect(line.savers).toBeUndefined();
    expect((upstream.requests[0].body.messages as Array<{ content: string }>)[0].content).toBe(content);
  });
});
