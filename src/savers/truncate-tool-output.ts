import { isLowSurrogate, prefixEnd } from '../tokens/count.js';
import { fenceSpans } from './fences.js';
import type { CountTokens, Edit, Saver, TextPart } from './types.js';

export interface TruncateOptions {
  max_tokens: number;
}

/**
 * `truncate_tool_output`: a tool result over `max_tokens` keeps its head and its tail (a log's
 * error is usually at the end) around a visible marker saying how many tokens were cut. Cuts
 * fall on line breaks where one is near, and never inside a fenced code block: a block is kept
 * whole or cut whole. A result in several text parts shares the budget in proportion.
 */
export function truncateToolOutputSaver(options: TruncateOptions): Saver {
  return {
    name: 'truncate_tool_output',
    run(view, count) {
      const edits: Edit[] = [];
      for (const message of view.messages) {
        for (const parts of resultsOf(message.parts)) {
          const sizes = parts.map((part) => count(part.text));
          const total = sizes.reduce((a, b) => a + b, 0);
          if (total <= options.max_tokens) continue;
          parts.forEach((part, i) => {
            const budget = Math.floor((options.max_tokens * sizes[i]) / total);
            const text = truncateText(part.text, budget, count);
            if (text !== part.text) edits.push({ kind: 'rewrite', part, text });
          });
        }
      }
      return edits;
    },
  };
}

/** The tool-result parts of a message, grouped by the call they answer. */
function resultsOf(parts: readonly TextPart[]): TextPart[][] {
  const byCall = new Map<string, TextPart[]>();
  for (const part of parts) {
    if (part.toolResult === undefined) continue;
    const group = byCall.get(part.toolResult);
    if (group) group.push(part);
    else byCall.set(part.toolResult, [part]);
  }
  return [...byCall.values()];
}

export function truncationMarker(tokens: number): string {
  return `[... ${tokens} tokens truncated ...]`;
}

/** `text` cut to at most `budget` tokens (head + marker + tail); `text` itself when it fits. */
export function truncateText(text: string, budget: number, count: CountTokens): string {
  const total = count(text);
  if (total <= budget) return text;
  const spans = fenceSpans(text);
  let keep = budget - count(truncationMarker(total)) - 2; // 2: the line breaks around the marker
  for (let attempt = 0; attempt < 4; attempt++) {
    const result = cut(text, total, Math.max(0, keep), spans, count);
    const size = count(result);
    if (size <= budget || keep <= 0) return size < total ? result : text;
    keep -= size - budget + 1;
  }
  return text;
}

function cut(text: string, total: number, keep: number, spans: Array<[number, number]>, count: CountTokens): string {
  const headBudget = Math.ceil(keep / 2);
  const headEnd = outOfFence(snapBack(text, prefixEnd(text, headBudget, total, count)), spans, 'start');
  const tailBudget = keep - (headEnd === 0 ? 0 : Math.min(headBudget, count(text.slice(0, headEnd))));
  let tailStart = outOfFence(snapForward(text, suffixStart(text, tailBudget, total, count)), spans, 'end');
  if (tailStart < headEnd) tailStart = headEnd;
  const head = text.slice(0, headEnd);
  const tail = text.slice(tailStart);
  const removed = Math.max(1, total - count(head) - count(tail));
  const before = head === '' || head.endsWith('\n') ? '' : '\n';
  const after = tail === '' || tail.startsWith('\n') ? '' : '\n';
  return `${head}${before}${truncationMarker(removed)}${after}${tail}`;
}

/** A cut inside a fenced block moves to the block's start (`start`) or end (`end`). */
function outOfFence(at: number, spans: Array<[number, number]>, side: 'start' | 'end'): number {
  for (const [start, end] of spans) if (at > start && at < end) return side === 'start' ? start : end;
  return at;
}

/** The start of a suffix of at most `budget` tokens. */
function suffixStart(text: string, budget: number, total: number, count: CountTokens): number {
  if (budget <= 0) return text.length;
  let length = Math.floor((text.length * budget) / total);
  for (let i = 0; i < 8 && length > 0; i++) {
    const tokens = count(text.slice(text.length - length));
    if (tokens <= budget) break;
    length = Math.floor(((length * budget) / tokens) * 0.97);
  }
  const start = text.length - length;
  return isLowSurrogate(text.charCodeAt(start)) ? start + 1 : start;
}

/** Back to just after a line break in the last quarter of the head, if there is one. */
function snapBack(text: string, end: number): number {
  const newline = text.lastIndexOf('\n', end - 1);
  return newline >= 0 && end - (newline + 1) <= end / 4 ? newline + 1 : end;
}

/** Forward to the next line break in the first quarter of the tail, if there is one. */
function snapForward(text: string, start: number): number {
  const newline = text.indexOf('\n', start);
  return newline >= 0 && newline - start <= (text.length - start) / 4 ? newline : start;
}
