import { anthropicEvent, endAnthropicStream, startAnthropicStream } from './anthropic-upstream.js';
import { chunk, type Script, type ScriptContext } from './fake-upstream.js';
import { ollamaDone, ollamaLine, startOllamaStream } from './ollama-upstream.js';

// Upstream streams with a pace of their own: jittered cadences, stalls with the socket left open,
// and keep-alives that carry no content, on the Chat, Messages and Ollama wires.

/** Sixty words, the first with no leading space: a long enough answer to have a pace. */
export const SIXTY = Array.from({ length: 60 }, (_, i) => `${i === 0 ? '' : ' '}w${i + 1}`);
export const SIXTY_TEXT = SIXTY.join('');

export type UpstreamWire = 'openai' | 'anthropic' | 'ollama';

/** How one wire writes a stream: its start, a word, a keep-alive without content, its end. */
interface WireWriter {
  start(ctx: ScriptContext): void;
  word(ctx: ScriptContext, text: string): void;
  keepAlive(ctx: ScriptContext, n: number): void;
  end(ctx: ScriptContext, words: number): void;
}

export const WIRE_WRITERS: Record<UpstreamWire, WireWriter> = {
  openai: {
    start: (ctx) => {
      ctx.startStream();
      ctx.role();
    },
    word: (ctx, text) => ctx.content(text),
    // SSE comments, empty deltas and usage-only chunks in turn, as servers and proxies send them.
    keepAlive: (ctx, n) => {
      if (n % 3 === 0) ctx.raw(': keep-alive\n\n');
      else if (n % 3 === 1) ctx.event(chunk({ content: '' }));
      else ctx.usage(7, 3);
    },
    end: (ctx) => {
      ctx.finish();
      ctx.done();
    },
  },
  anthropic: {
    start: (ctx) => {
      startAnthropicStream(ctx);
      anthropicEvent(ctx, 'content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    },
    word: (ctx, text) => anthropicEvent(ctx, 'content_block_delta', { index: 0, delta: { type: 'text_delta', text } }),
    keepAlive: (ctx, n) =>
      n % 2 === 0 ? anthropicEvent(ctx, 'ping', {}) : anthropicEvent(ctx, 'content_block_delta', { index: 0, delta: { type: 'text_delta', text: '' } }),
    end: (ctx, words) => {
      anthropicEvent(ctx, 'content_block_stop', { index: 0 });
      endAnthropicStream(ctx, 'end_turn', words);
    },
  },
  ollama: {
    start: startOllamaStream,
    word: (ctx, content) => ollamaLine(ctx, { content }),
    keepAlive: (ctx) => ollamaLine(ctx, { content: '' }),
    end: (ctx, words) => ollamaDone(ctx, 12, words),
  },
};

/** A whole answer, each word `gapMs(i)` after the one before (the first at once). */
export function pacedStream(words: string[], gapMs: (i: number) => number, wire: UpstreamWire = 'openai'): Script {
  const writer = WIRE_WRITERS[wire];
  return async (ctx) => {
    writer.start(ctx);
    for (let i = 0; i < words.length; i++) {
      if (i > 0) await ctx.wait(gapMs(i));
      if (ctx.isClosed()) return;
      writer.word(ctx, words[i]);
    }
    writer.end(ctx, words.length);
  };
}

/**
 * The first `n` words every `gapMs`, then no word again: silence with the socket open (no
 * `keepAliveMs`), or a keep-alive every `keepAliveMs`, until llm-route hangs up (or `forMs`).
 */
export function stallsAfter(words: string[], n: number, gapMs: number, opts: { wire?: UpstreamWire; keepAliveMs?: number; forMs?: number } = {}): Script {
  const writer = WIRE_WRITERS[opts.wire ?? 'openai'];
  return async (ctx) => {
    writer.start(ctx);
    for (let i = 0; i < n; i++) {
      writer.word(ctx, words[i]);
      await ctx.wait(gapMs);
    }
    const until = performance.now() + (opts.forMs ?? 60_000);
    for (let k = 0; !ctx.isClosed() && performance.now() < until; k++) {
      if (opts.keepAliveMs === undefined) await Promise.race([ctx.closed, ctx.wait(until - performance.now())]);
      else {
        await ctx.wait(opts.keepAliveMs);
        if (!ctx.isClosed()) writer.keepAlive(ctx, k);
      }
    }
    if (!ctx.isClosed()) ctx.res.end();
  };
}

/**
 * A recovery tier's answer, a word every `gapMs`: the rest of `words` after a continuation's
 * delivered text (a trailing assistant message that begins the answer), else all of them.
 */
export function continuesOrReplays(words: string[], opts: { wire?: UpstreamWire; gapMs?: number } = {}): Script {
  return (ctx) => {
    const messages = (ctx.body.messages ?? []) as Array<{ role: string; content: unknown }>;
    const last = messages[messages.length - 1];
    const delivered = last?.role === 'assistant' ? textOf(last.content) : '';
    const full = words.join('');
    const rest = delivered !== '' && full.startsWith(delivered) ? (full.slice(delivered.length).match(/\s*\S+/g) ?? []) : words;
    return pacedStream(rest, () => opts.gapMs ?? 0, opts.wire)(ctx);
  };
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('');
  return '';
}
