import { type Script, taggedChunk } from './fake-upstream.js';
import type { useHarness } from './harness.js';
import type { ConfigSpec } from './proxy.js';
import type { ClientProtocolName } from './resume-clients.js';

// Scripted upstreams for mid-stream resume: a text that breaks after N words, and a two-tier route that resumes it.

export const WORDS = ['The ', 'quick ', 'brown ', 'fox ', 'jumps ', 'over ', 'the ', 'lazy ', 'dog.'];
export const FULL = WORDS.join('');
export const PROTOCOLS: ClientProtocolName[] = ['chat', 'responses', 'messages'];

/** Streams the first `n` words, lets them reach llm-route, then resets the connection (a killed server). */
export function breakAfter(n: number, words = WORDS): Script {
  return async (ctx) => {
    ctx.startStream();
    ctx.role();
    for (const word of words.slice(0, n)) {
      ctx.content(word);
      await ctx.wait(5);
    }
    await ctx.wait(30);
    ctx.destroy();
  };
}

/** A healthy stream whose chunks carry an id of their own: a seam would show the client a second id. */
export function taggedStream(words: string[], tag: string): Script {
  return (ctx) => {
    ctx.startStream();
    ctx.event(taggedChunk(tag, { role: 'assistant', content: '' }));
    for (const word of words) ctx.event(taggedChunk(tag, { content: word }));
    ctx.event(taggedChunk(tag, {}, 'stop'));
    ctx.done();
  };
}

export async function resumeRoute(
  h: ReturnType<typeof useHarness>,
  first: Script,
  second: Script,
  opts: { prefill?: boolean; onBreak?: 'error' | 'resume' } = {},
) {
  const a = await h.fake();
  const b = await h.fake();
  a.always(first);
  b.always(second);
  const spec: ConfigSpec = {
    tiers: [
      { name: 'a', url: a.url, retry: { attempts: 1 } },
      { name: 'b', url: b.url, retry: { attempts: 1 }, ...(opts.prefill === undefined ? {} : { extra: { prefill: opts.prefill } }) },
    ],
    routeKeys: opts.onBreak === 'error' ? {} : { on_break: 'resume' },
  };
  const proxy = await h.proxy(spec);
  return { a, b, proxy };
}

export function lastMessage(body: Record<string, unknown>): unknown {
  const messages = body.messages as unknown[];
  return messages[messages.length - 1];
}
