import { describe, expect, it } from 'vitest';
import { applySavers } from '../../../src/savers/pipeline.js';
import type { Saver } from '../../../src/savers/types.js';
import { buildSaver } from '../../../src/savers/registry.js';
import { contentTokens } from '../../../src/savers/view.js';
import type { TokenCounter } from '../../../src/tokens/count.js';
import { frozen, logLines, o200k, run } from './helpers.js';

const body = () => ({
  model: 'chat',
  messages: [
    { role: 'system', content: 'Be   brief.\n\n\n\nBe kind.' },
    { role: 'system', content: 'Be   brief.\n\n\n\nBe kind.' },
    { role: 'user', content: 'Show  me  the  log.' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'log', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: JSON.stringify({ lines: logLines(30).split('\n') }, null, 2) },
  ],
});

const ALL = [
  buildSaver({ name: 'whitespace', options: { tool_results: false } }),
  buildSaver({ name: 'dedupe_system', options: {} }),
  buildSaver({ name: 'minify_tool_json', options: {} }),
  buildSaver({ name: 'truncate_tool_output', options: { max_tokens: 200 } }),
  buildSaver({ name: 'trim_history', options: { max_tokens: 8000, keep_last: 6 } }),
];

/** A saver that rewrites the first text it sees to `text`. */
function rewriting(name: string, text: string, before?: () => void): Saver {
  return {
    name,
    run(view) {
      before?.();
      return [{ kind: 'rewrite', part: view.messages[0].parts[0], text }];
    },
  };
}

describe('applySavers', () => {
  it('runs in order; each measure is the tokenizer count of the body before and after that saver', async () => {
    const { count } = await o200k();
    const original = frozen(body()); // a saver touching the caller's body would throw
    const result = await run('chat', original, ALL);
    expect(result.measures.map((m) => m.saver)).toEqual(['whitespace', 'dedupe_system', 'minify_tool_json', 'truncate_tool_output', 'trim_history']);
    expect(result.measures[0].before).toBe(contentTokens('chat', original, count));
    for (let i = 1; i < result.measures.length; i++) expect(result.measures[i].before).toBe(result.measures[i - 1].after);
    expect(result.measures.at(-1)!.after).toBe(contentTokens('chat', result.body, count));
    // each saver's own saving equals the count difference of running the savers up to it
    for (let i = 0; i < ALL.length; i++) {
      const upTo = await run('chat', original, ALL.slice(0, i + 1));
      expect(contentTokens('chat', upTo.body, count)).toBe(result.measures[i].after);
    }
    expect(result.measures.map((m) => m.before - m.after > 0)).toEqual([true, true, true, true, false]);
    expect(result.changed).toBe(true);
    expect(result.failures).toEqual([]);
  });

  it('is deterministic: the same body in gives the same bytes out', async () => {
    const a = await run('chat', body(), ALL);
    const b = await run('chat', body(), ALL);
    expect(JSON.stringify(a.body)).toBe(JSON.stringify(b.body));
  });

  it('a route without savers pays nothing: no copy, no tokenizer', () => {
    const counter: TokenCounter = {
      encoding: 'o200k_base',
      count: () => {
        throw new Error('tokenized');
      },
    };
    const original = body();
    expect(applySavers('chat', original, [], counter)).toEqual({ body: original, changed: false, measures: [], failures: [] });
    expect(applySavers('chat', original, [], counter).body).toBe(original);
  });

  it('a saver that throws is skipped and counted; the body from before it goes on to the next saver', async () => {
    const boom: Saver = {
      name: 'boom',
      run: () => {
        throw new Error('kaboom');
      },
    };
    const result = await run('chat', body(), [ALL[1], boom, ALL[0]]);
    expect(result.measures[1]).toEqual({ saver: 'boom', before: result.measures[0].after, after: result.measures[0].after, failed: true });
    expect(result.failures).toEqual([{ saver: 'boom', reason: 'threw', message: 'kaboom' }]);
    expect(result.measures[2].after).toBeLessThan(result.measures[2].before);
    expect(JSON.stringify(result.body)).toBe(JSON.stringify((await run('chat', body(), [ALL[1], ALL[0]])).body));
  });

  it('a saver that returns a bad edit is skipped, none of its edits kept', async () => {
    const bad: Saver = {
      name: 'bad',
      run: (view) => [
        { kind: 'rewrite', part: view.messages[2].parts[0], text: 'x' },
        { kind: 'drop_message', message: view.messages[0] },
      ],
    };
    const original = body();
    const result = await run('chat', original, [bad]);
    expect(result.body).toBe(original);
    expect(result.failures[0]).toMatchObject({ saver: 'bad', reason: 'threw' });
    expect(result.measures[0].failed).toBe(true);
  });

  it('a saver that overruns its 20 ms budget is skipped (clock injected); its edits are discarded', async () => {
    let clock = 0;
    const slow = rewriting('slow', 'x', () => (clock += 25));
    const quick = rewriting('quick', 'y', () => (clock += 15));
    const original = body();
    const result = await run('chat', original, [slow], { now: () => clock });
    expect(result.body).toBe(original);
    expect(result.failures).toEqual([{ saver: 'slow', reason: 'overran', message: 'took 25.0 ms (budget 20 ms)' }]);
    expect(result.measures[0].failed).toBe(true);
    const ok = await run('chat', body(), [quick], { now: () => clock });
    expect((ok.body.messages as Array<{ content: string }>)[0].content).toBe('y');
    expect(ok.failures).toEqual([]);
  });

  it('time in the tokenizer is not charged to the saver', async () => {
    let clock = 0;
    const base = await o200k();
    const slowCounter: TokenCounter = {
      encoding: 'o200k_base',
      count: (text) => {
        clock += 30;
        return base.count(text);
      },
    };
    const counting: Saver = {
      name: 'counting',
      run(view, count) {
        count('a text only this test counts, with a counter of its own: nothing remembered');
        return [{ kind: 'rewrite', part: view.messages[0].parts[0], text: 'z' }];
      },
    };
    const result = applySavers('chat', body(), [counting], slowCounter, { now: () => clock });
    expect(result.failures).toEqual([]);
    expect(clock).toBeGreaterThanOrEqual(30);
    expect((result.body.messages as Array<{ content: string }>)[0].content).toBe('z');
  });

  it('a saver whose result is not smaller is not applied (savings are never negative)', async () => {
    const longer = rewriting('longer', 'Be brief and also be very, very kind to everyone, always, in every reply you write.');
    const original = body();
    const result = await run('chat', original, [longer]);
    expect(result.body).toBe(original);
    expect(result.changed).toBe(false);
    expect(result.measures[0].before).toBe(result.measures[0].after);
    expect(result.measures[0].failed).toBeUndefined();
  });

  it('a body without a conversation is passed through', async () => {
    const odd = { model: 'chat', prompt: 'legacy completion' };
    expect(await run('chat', odd, ALL)).toEqual({ body: odd, changed: false, measures: [], failures: [] });
  });

  it('trace: what each applied saver changed, by path', async () => {
    const result = await run('chat', body(), [ALL[0], ALL[1]], { trace: true });
    expect(result.changes).toEqual([
      [
        { kind: 'rewrite', path: 'messages[0].content', before: 'Be   brief.\n\n\n\nBe kind.', after: 'Be brief.\n\nBe kind.' },
        { kind: 'rewrite', path: 'messages[1].content', before: 'Be   brief.\n\n\n\nBe kind.', after: 'Be brief.\n\nBe kind.' },
        { kind: 'rewrite', path: 'messages[2].content', before: 'Show  me  the  log.', after: 'Show me the log.' },
      ],
      [{ kind: 'drop', path: 'messages[1].content', role: 'system', texts: ['Be brief.\n\nBe kind.'] }],
    ]);
  });
});
