import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../src/config/load.js';
import { clientCodec } from '../../../src/protocols/registry.js';
import type { ClientProtocol } from '../../../src/protocols/core/names.js';
import { boundVerdict, compare, matchRules } from '../../../src/rules/match-rules.js';
import { RequestFacts } from '../../../src/rules/request-facts.js';
import { asksThinking, hasImages } from '../../../src/rules/request-traits.js';

const config = (rules: string) =>
  loadConfigText(
    `version: 1
providers:
  p: { type: openai, base_url: "http://127.0.0.1:1/v1" }
routes:
  a: { tiers: [{ provider: p, model: m }] }
  b: { tiers: [{ provider: p, model: m }] }
rules:
${rules}`,
    '/t/llm-route.yaml',
    {},
  );

/** Facts of a request, counted for real; `counted`: how often its prompt was read for a count. */
function facts(body: Record<string, unknown>, bytes: number, protocol: ClientProtocol = 'chat'): { facts: RequestFacts; counted: () => number } {
  const parsed = clientCodec(protocol).parse(body, {});
  if (!parsed.ok) throw new Error(parsed.message);
  let counted = 0;
  const request = Object.create(parsed.request, {
    neutral: {
      value: () => {
        counted++;
        return parsed.request.neutral();
      },
    },
  });
  return { facts: new RequestFacts(request, {}, bytes), counted: () => counted };
}

const chat = { model: 'a', messages: [{ role: 'user', content: 'hi' }] };
const long = { model: 'a', messages: [{ role: 'user', content: 'word '.repeat(55_000) }] };

describe("prompt_tokens: counted only when a rule asks and the body's size cannot decide", () => {
  it('a body smaller than the threshold decides without a count, synchronously', () => {
    const cfg = config('  - { when: { prompt_tokens: ">= 60000" }, route: b }\n  - { when: { prompt_tokens: "< 60000" }, route: a }\n');
    const small = facts(chat, 2000);
    const match = matchRules(cfg, small.facts);
    expect(match).not.toBeInstanceOf(Promise);
    expect((match as { route: { name: string } }).route.name).toBe('a');
    expect(small.counted()).toBe(0);
  });

  it('a body at or over the threshold is counted once, however many rules ask', async () => {
    const cfg = config('  - { when: { prompt_tokens: ">= 60000" }, route: b }\n  - { when: { prompt_tokens: "> 50000" }, route: a }\n');
    const big = facts(long, Buffer.byteLength(JSON.stringify(long)));
    const match = await matchRules(cfg, big.facts);
    expect(match?.rule.index).toBe(1);
    expect(big.counted()).toBe(1);
  });

  it('no rule asks: never counted, whatever the size; an earlier rule that matches first: never counted', async () => {
    const none = facts(chat, 900_000);
    expect(matchRules(config('  - { when: { tools: true }, route: b }\n'), none.facts)).toBeUndefined();
    const first = facts(chat, 900_000);
    const match = matchRules(config('  - { when: { model: "a*" }, route: b }\n  - { when: { prompt_tokens: ">= 10" }, route: a }\n'), first.facts);
    expect((match as { route: { name: string } }).route.name).toBe('b');
    expect(none.counted() + first.counted()).toBe(0);
  });

  it('comparisons and their byte bound', () => {
    expect([
      compare({ op: '>=', value: 10 }, 10),
      compare({ op: '>', value: 10 }, 10),
      compare({ op: '<', value: 10 }, 9),
      compare({ op: '<=', value: 10 }, 11),
      compare({ op: '==', value: 10 }, 10),
    ]).toEqual([true, false, true, false, true]);
    expect([
      boundVerdict({ op: '>=', value: 100 }, 99),
      boundVerdict({ op: '<', value: 100 }, 99),
      boundVerdict({ op: '==', value: 100 }, 99),
      boundVerdict({ op: '>=', value: 100 }, 100),
    ]).toEqual([false, true, false, undefined]);
  });
});

describe('thinking, as each protocol asks for it', () => {
  it('Anthropic enabled or adaptive; Chat reasoning_effort and Responses reasoning.effort other than none or minimal', () => {
    expect(asksThinking('messages', { thinking: { type: 'enabled', budget_tokens: 1024 } })).toBe(true);
    expect(asksThinking('messages', { thinking: { type: 'adaptive' } })).toBe(true);
    expect(asksThinking('messages', { thinking: { type: 'disabled' } })).toBe(false);
    expect(asksThinking('chat', { reasoning_effort: 'low' })).toBe(true);
    expect(asksThinking('chat', { reasoning_effort: 'none' })).toBe(false);
    expect(asksThinking('responses', { reasoning: { effort: 'minimal' } })).toBe(false);
    expect(asksThinking('responses', { reasoning: { effort: 'high' } })).toBe(true);
    expect(asksThinking('responses', {})).toBe(false);
  });
});

describe('images, anywhere in the conversation', () => {
  it('Chat image_url, Messages image in a tool result, Responses input_image in a message and in a tool output; text alone is none', () => {
    expect(hasImages({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AA' } }] }] })).toBe(true);
    expect(
      hasImages({
        messages: [
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AA' } }] }],
          },
        ],
      }),
    ).toBe(true);
    expect(hasImages({ input: [{ type: 'message', role: 'user', content: [{ type: 'input_image', image_url: 'data:image/png;base64,AA' }] }] })).toBe(true);
    expect(
      hasImages({ input: [{ type: 'function_call_output', call_id: 'c', output: [{ type: 'input_image', image_url: 'data:image/png;base64,AA' }] }] }),
    ).toBe(true);
    expect(
      hasImages({
        messages: [
          { role: 'user', content: 'an image of a cat' },
          { role: 'user', content: [{ type: 'text', text: '"type":"image"' }] },
        ],
      }),
    ).toBe(false);
    expect(hasImages({ input: 'image' })).toBe(false);
  });
});
