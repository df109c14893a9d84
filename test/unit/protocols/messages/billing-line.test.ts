import { describe, expect, it } from 'vitest';
import { withoutBillingLine } from '../../../../src/protocols/messages/billing-line.js';

/**
 * Claude Code's billing line, in the shapes it has been seen in: its own first system block
 * (2.1.42 as captured in ggml-org/llama.cpp#19494; 2.1.177 in anthropics/claude-code 68900), and
 * at the start of a longer text.
 */
const LINE_2_1_42 = 'x-anthropic-billing-header: cc_version=2.1.42.834; cc_entrypoint=cli; cch=65abc;';
const LINE_2_1_177 = 'x-anthropic-billing-header: cc_version=2.1.177.01c; cc_entrypoint=sdk-cli; cch=36ee5;';
const IDENTITY = "You are Claude Code, Anthropic's official CLI for Claude.";

describe("Claude Code's billing line", () => {
  it('goes with its block when it is the first system block, as Claude Code sends it; the rest is kept as it was', () => {
    const rest = [
      { type: 'text', text: IDENTITY, cache_control: { type: 'ephemeral' } },
      { type: 'text', text: '\nYou are an interactive CLI tool', cache_control: { type: 'ephemeral' } },
    ];
    expect(withoutBillingLine([{ type: 'text', text: LINE_2_1_42 }, ...rest])).toEqual(rest);
    expect(withoutBillingLine([{ type: 'text', text: LINE_2_1_177 }, ...rest])).toEqual(rest);
  });

  it('leaves the text after it when it starts a longer block or a string system prompt', () => {
    expect(withoutBillingLine(`${LINE_2_1_177}\n${IDENTITY}`)).toBe(IDENTITY);
    expect(withoutBillingLine(`${LINE_2_1_177}\r\n${IDENTITY}`)).toBe(IDENTITY);
    expect(withoutBillingLine([{ type: 'text', text: `${LINE_2_1_42}\n${IDENTITY}`, cache_control: { type: 'ephemeral' } }])).toEqual([
      { type: 'text', text: IDENTITY, cache_control: { type: 'ephemeral' } },
    ]);
    // Two blocks joined without a newline (how llama.cpp logs it): only the fields go.
    expect(withoutBillingLine(`${LINE_2_1_42}${IDENTITY}`)).toBe(IDENTITY);
  });

  it('removes the whole line whatever its fields: a new field, a last field without its semicolon, a shape not seen yet', () => {
    expect(withoutBillingLine('x-anthropic-billing-header: cc_version=3.0.1.aaa; cc_entrypoint=cli; cch=0aaa9; cc_workload=bg;\nhello')).toBe('hello');
    expect(withoutBillingLine('x-anthropic-billing-header: cc_version=3.0.1.aaa; cch=0aaa9\nhello')).toBe('hello');
    expect(withoutBillingLine('x-anthropic-billing-header: v3 0aaa9 sdk\nhello')).toBe('hello');
    expect(withoutBillingLine('x-anthropic-billing-header:')).toBe('');
  });

  it('changes nothing else: no line, the line further down, or in a block other than the first', () => {
    const blocks = [{ type: 'text', text: IDENTITY }];
    expect(withoutBillingLine(blocks)).toBe(blocks);
    expect(withoutBillingLine(IDENTITY)).toBe(IDENTITY);
    const later = `${IDENTITY}\n${LINE_2_1_42}`;
    expect(withoutBillingLine(later)).toBe(later);
    const second = [
      { type: 'text', text: IDENTITY },
      { type: 'text', text: LINE_2_1_42 },
    ];
    expect(withoutBillingLine(second)).toBe(second);
    for (const value of [undefined, null, 7, [], [null], [{ type: 'text' }], { text: LINE_2_1_42 }]) expect(withoutBillingLine(value)).toBe(value);
  });

  it('two requests whose lines differ only in their nonce become the same', () => {
    const turn = (nonce: string) => [
      { type: 'text', text: `x-anthropic-billing-header: cc_version=2.1.177.01c; cc_entrypoint=sdk-cli; cch=${nonce};` },
      { type: 'text', text: IDENTITY },
    ];
    expect(JSON.stringify(withoutBillingLine(turn('36ee5')))).toBe(JSON.stringify(withoutBillingLine(turn('0aaa9'))));
  });
});
