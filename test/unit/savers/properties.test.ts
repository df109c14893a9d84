import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fencedBlocks } from '../../../src/savers/fences.js';
import { applySavers } from '../../../src/savers/pipeline.js';
import { buildSaver } from '../../../src/savers/registry.js';
import { contentTokens, viewOf } from '../../../src/savers/view.js';
import type { SaverSpec } from '../../../src/config/schema.js';
import type { ClientProtocol } from '../../../src/telemetry/events.js';
import { frozen, o200k, stoppedClock } from './helpers.js';

// ─── conversations, rendered in each protocol ─────────────────────────────────

const word = fc.constantFrom('alpha', 'beta', 'gamma', 'délta', '東京', 'x', '{', '}', '"k":', '1.0', 'error:', 'def', 'return');
const space = fc.constantFrom(' ', '  ', '   ', '\t', '\n', '\n\n', '\n\n\n\n', '  \n', '\r\n', ' \t \n');
const fence = fc
  .tuple(fc.constantFrom('```', '~~~', '````', '```py'), fc.array(fc.oneof(word, space), { maxLength: 12 }), fc.boolean())
  .map(([open, body, closed]) => `\n${open}\n${body.join('')}\n${closed ? open.replace(/[a-z]+$/, '') : ''}\n`);
const json = fc
  .jsonValue({ maxDepth: 3 })
  .filter((v) => typeof v === 'object' && v !== null)
  .map((v) => JSON.stringify(v, null, 2));
const text = fc
  .oneof(
    {
      weight: 4,
      arbitrary: fc
        .array(fc.oneof({ weight: 4, arbitrary: word }, { weight: 3, arbitrary: space }, { weight: 1, arbitrary: fence }), { minLength: 1, maxLength: 40 })
        .map((parts) => parts.join('')),
    },
    { weight: 1, arbitrary: json },
  )
  .filter((t) => t.trim() !== '');

type Turn = { kind: 'system' | 'user' | 'assistant'; text: string } | { kind: 'tools'; results: string[]; reasoning: boolean };
const turn: fc.Arbitrary<Turn> = fc.oneof(
  fc.record({ kind: fc.constantFrom('system' as const, 'user' as const, 'assistant' as const), text }),
  fc.record({ kind: fc.constant('tools' as const), results: fc.array(text, { minLength: 1, maxLength: 3 }), reasoning: fc.boolean() }),
);
const conversation = fc.array(turn, { minLength: 1, maxLength: 12 });

function render(protocol: ClientProtocol, turns: Turn[]): Record<string, unknown> {
  let n = 0;
  const ids = (count: number) => Array.from({ length: count }, () => `call_${n++}`);
  if (protocol === 'chat') {
    const messages = turns.flatMap((t): Record<string, unknown>[] => {
      if (t.kind !== 'tools') return [{ role: t.kind, content: t.kind === 'user' ? [{ type: 'text', text: t.text }] : t.text }];
      const calls = ids(t.results.length);
      return [
        { role: 'assistant', content: null, tool_calls: calls.map((id) => ({ id, type: 'function', function: { name: 'f', arguments: '{"a": 1}' } })) },
        ...calls.map((id, i) => ({ role: 'tool', tool_call_id: id, content: t.results[i] })),
      ];
    });
    return { model: 'chat', messages };
  }
  if (protocol === 'messages') {
    const system = turns
      .filter((t) => t.kind === 'system')
      .map((t) => ({ type: 'text', text: (t as { text: string }).text, cache_control: { type: 'ephemeral' } }));
    const messages = turns.flatMap((t): Record<string, unknown>[] => {
      if (t.kind === 'system') return [];
      if (t.kind !== 'tools') return [{ role: t.kind, content: t.kind === 'user' ? t.text : [{ type: 'text', text: t.text }] }];
      const calls = ids(t.results.length);
      return [
        { role: 'assistant', content: calls.map((id) => ({ type: 'tool_use', id, name: 'f', input: { a: 1 } })) },
        { role: 'user', content: calls.map((id, i) => ({ type: 'tool_result', tool_use_id: id, content: [{ type: 'text', text: t.results[i] }] })) },
      ];
    });
    return { model: 'claude', max_tokens: 10, system, messages };
  }
  const input = turns.flatMap((t): Record<string, unknown>[] => {
    if (t.kind === 'system') return [{ role: 'developer', content: t.text }];
    if (t.kind === 'user') return [{ role: 'user', content: [{ type: 'input_text', text: t.text }] }];
    if (t.kind === 'assistant') return [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: t.text, annotations: [] }] }];
    if (t.kind !== 'tools') return [];
    const calls = ids(t.results.length);
    return [
      ...(t.reasoning ? [{ type: 'reasoning', id: `rs_${n}`, summary: [] }] : []),
      ...calls.map((id) => ({ type: 'function_call', call_id: id, name: 'f', arguments: '{}' })),
      ...calls.map((id, i) => ({ type: 'function_call_output', call_id: id, output: t.results[i] })),
    ];
  });
  return { model: 'gpt', instructions: 'You are terse.', input };
}

const protocol = fc.constantFrom<ClientProtocol>('chat', 'responses', 'messages');
const specs = fc.record({
  truncate: fc.integer({ min: 32, max: 120 }),
  trim: fc.integer({ min: 1, max: 600 }),
  keepLast: fc.integer({ min: 1, max: 5 }),
  toolResults: fc.boolean(),
});
function saverList(s: { truncate: number; trim: number; keepLast: number; toolResults: boolean }): SaverSpec[] {
  return [
    { name: 'whitespace', options: { tool_results: s.toolResults } },
    { name: 'dedupe_system', options: {} },
    { name: 'minify_tool_json', options: {} },
    { name: 'truncate_tool_output', options: { max_tokens: s.truncate } },
    { name: 'trim_history', options: { max_tokens: s.trim, keep_last: s.keepLast } },
  ];
}

/** Every call id made, and which call ids each result answers, in the body. */
function toolLinks(p: ClientProtocol, body: Record<string, unknown>) {
  const view = viewOf(p, structuredClone(body))!;
  return { calls: new Set(view.messages.flatMap((m) => m.calls)), answers: new Set(view.messages.flatMap((m) => m.answers)) };
}

const RUNS = { numRuns: 80 };
// The time budget is the one thing that may skip a saver on one run and not the next (a loaded
// machine): these properties are about the savers, so their clock stands still.
const FIXED = { now: stoppedClock };

describe('saver properties (fast-check, every protocol, all five savers)', () => {
  it('deterministic: the same body in gives the same bytes out; the body passed in is never modified', async () => {
    const counter = await o200k();
    fc.assert(
      fc.property(protocol, conversation, specs, (p, turns, s) => {
        const savers = saverList(s).map(buildSaver);
        const body = frozen(render(p, turns));
        const once = JSON.stringify(applySavers(p, body, savers, counter, FIXED).body);
        const twice = JSON.stringify(applySavers(p, structuredClone(body), saverList(s).map(buildSaver), counter, FIXED).body);
        expect(once).toBe(twice);
      }),
      RUNS,
    );
  });

  it('never changes a fenced code block: rewrites keep each block; truncation keeps or cuts whole blocks', async () => {
    const counter = await o200k();
    fc.assert(
      fc.property(protocol, conversation, specs, (p, turns, s) => {
        const specsList = saverList(s);
        const result = applySavers(p, render(p, turns), specsList.map(buildSaver), counter, { trace: true, ...FIXED });
        result.changes!.forEach((changes, i) => {
          for (const change of changes) {
            if (change.kind !== 'rewrite') continue;
            const before = fencedBlocks(change.before);
            const after = fencedBlocks(change.after);
            if (specsList[i].name === 'truncate_tool_output') {
              let at = 0; // after's blocks are some of before's, whole and in order
              for (const block of after) {
                at = before.indexOf(block, at) + 1;
                expect(at).toBeGreaterThan(0);
              }
            } else {
              expect(after).toEqual(before);
            }
          }
        });
      }),
      RUNS,
    );
  });

  it('never orphans a tool result, never separates a call from its results', async () => {
    const counter = await o200k();
    fc.assert(
      fc.property(protocol, conversation, specs, (p, turns, s) => {
        const body = render(p, turns);
        const before = toolLinks(p, body);
        const after = toolLinks(p, applySavers(p, body, saverList(s).map(buildSaver), counter, FIXED).body);
        for (const id of after.answers) if (before.calls.has(id)) expect(after.calls.has(id)).toBe(true);
        for (const id of after.calls) if (before.answers.has(id)) expect(after.answers.has(id)).toBe(true);
      }),
      RUNS,
    );
  });

  it('savings are never negative, and the last measure is the tokenizer count of the body sent', async () => {
    const counter = await o200k();
    fc.assert(
      fc.property(protocol, conversation, specs, (p, turns, s) => {
        const body = render(p, turns);
        const result = applySavers(p, body, saverList(s).map(buildSaver), counter, FIXED);
        expect(result.failures).toEqual([]);
        expect(result.measures[0].before).toBe(contentTokens(p, body, counter.count));
        for (const m of result.measures) expect(m.after).toBeLessThanOrEqual(m.before);
        expect(result.measures.at(-1)!.after).toBe(contentTokens(p, result.body, counter.count));
        expect(result.changed).toBe(result.measures.some((m) => m.after < m.before));
      }),
      RUNS,
    );
  });
});
