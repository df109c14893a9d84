import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { chunk, type Script, type ScriptContext } from './fake-upstream.js';
import { endAnthropicStream, startAnthropicStream } from './anthropic-upstream.js';
import { ollamaDone, ollamaLineText, startOllamaStream } from './ollama-upstream.js';
import { ResponsesScript } from './responses-upstream.js';
import type { useHarness } from './harness.js';
import type { RunningProxy, TierSpec } from './proxy.js';

/** Tools as Claude Code and Codex send them (draft-07 schemas), in each client protocol. */
const BASH_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  additionalProperties: false,
  properties: { command: { type: 'string', description: 'The command to execute' }, timeout: { type: 'number' } },
  required: ['command'],
};
const READ_SCHEMA = { type: 'object', properties: { file_path: { type: 'string' }, limit: { type: 'integer' } }, required: ['file_path'] };
export const CHAT_TOOLS = [
  { type: 'function' as const, function: { name: 'Bash', description: 'Run a shell command', parameters: BASH_SCHEMA } },
  { type: 'function' as const, function: { name: 'Read', description: 'Read a file', parameters: READ_SCHEMA } },
];
export const MESSAGES_TOOLS = [
  { name: 'Bash', description: 'Run a shell command', input_schema: BASH_SCHEMA as Anthropic.Tool.InputSchema },
  { name: 'Read', description: 'Read a file', input_schema: READ_SCHEMA as Anthropic.Tool.InputSchema },
];
export const RESPONSES_TOOLS = [
  { type: 'function' as const, name: 'Bash', description: 'Run a shell command', parameters: BASH_SCHEMA, strict: false },
  { type: 'function' as const, name: 'Read', description: 'Read a file', parameters: READ_SCHEMA, strict: false },
];

/** Claude Code's Write tool (its file's whole content in one argument: the longest call an agent makes), in each client protocol. */
const WRITE_SCHEMA = { type: 'object', properties: { file_path: { type: 'string' }, content: { type: 'string' } }, required: ['file_path', 'content'] };
export const WRITE_CHAT_TOOLS = [
  ...CHAT_TOOLS,
  { type: 'function' as const, function: { name: 'Write', description: 'Write a file', parameters: WRITE_SCHEMA } },
];
export const WRITE_MESSAGES_TOOLS = [
  ...MESSAGES_TOOLS,
  { name: 'Write', description: 'Write a file', input_schema: WRITE_SCHEMA as Anthropic.Tool.InputSchema },
];

/** A file of about `chars` characters as a model writes one: lines of code, quotes and backslashes that JSON escapes. */
export function fileContent(chars: number): string {
  const lines: string[] = [];
  for (let i = 0; lines.join('\n').length < chars; i++) lines.push(`def step_${i}(x):\n    return x * ${i} + len("it's \\"${i}\\"")  # step ${i}`);
  return lines.join('\n');
}

/** A Hermes <tool_call> of the Write tool, writing `content` to `path`. */
export function hermesWrite(path: string, content: string): string {
  return `<tool_call>\n${JSON.stringify({ name: 'Write', arguments: { file_path: path, content } })}\n</tool_call>`;
}

/** A fetch that keeps every response body the client got, byte for byte (the SDKs take a `fetch`). */
export function recordingFetch(): { fetch: typeof fetch; bodies: string[] } {
  const bodies: string[] = [];
  const recording = (async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
    const res = await fetch(input, init);
    const text = await res.text();
    bodies.push(text);
    return new Response(text, { status: res.status, statusText: res.statusText, headers: res.headers });
  }) as typeof fetch;
  return { fetch: recording, bodies };
}

export function openaiClient(proxy: RunningProxy, f: typeof fetch): OpenAI {
  return new OpenAI({ baseURL: proxy.baseURL, apiKey: 'x', maxRetries: 0, fetch: f });
}

export function anthropicClient(proxy: RunningProxy, f: typeof fetch): Anthropic {
  return new Anthropic({ baseURL: proxy.origin, apiKey: 'x', maxRetries: 0, fetch: f });
}

/** How a content script streams: `paceMs` between pieces (a slow model: each piece a token), silence instead of the end. */
export interface Pace {
  stallAfter?: boolean;
  paceMs?: number;
}

/**
 * An OpenAI-compatible server (llama-server, vLLM, LM Studio without a tool parser) streaming
 * `pieces` as content deltas; each event is written in two halves, so events and the form's
 * tags are split across chunks the way a real server's TCP writes split them.
 */
export function sseContent(pieces: string[], opts: Pace = {}): Script {
  return async (ctx) => {
    ctx.startStream();
    ctx.role();
    for (const piece of pieces) {
      await inHalves(ctx, `data: ${JSON.stringify(chunk({ content: piece }))}\n\n`);
      if (opts.paceMs) await ctx.wait(opts.paceMs);
    }
    if (opts.stallAfter) return void (await ctx.closed);
    ctx.finish();
    ctx.usage(40, 12);
    ctx.done();
  };
}

/** Anthropic's Messages API (a model behind an Anthropic-compatible server) streaming `pieces` as one text block's deltas, each event in two halves. */
export function anthropicContent(pieces: string[], opts: Pace = {}): Script {
  return async (ctx) => {
    startAnthropicStream(ctx);
    await inHalves(ctx, anthropicEventText('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }));
    await inHalves(ctx, anthropicEventText('ping', {}));
    for (const text of pieces) {
      await inHalves(ctx, anthropicEventText('content_block_delta', { index: 0, delta: { type: 'text_delta', text } }));
      if (opts.paceMs) await ctx.wait(opts.paceMs);
    }
    if (opts.stallAfter) return void (await ctx.closed);
    await inHalves(ctx, anthropicEventText('content_block_stop', { index: 0 }));
    endAnthropicStream(ctx, 'end_turn', pieces.length);
  };
}

function anthropicEventText(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

/** A Responses server (a passthrough tier) streaming `pieces` as one message item's text deltas, with its exact events. */
export function responsesContent(pieces: string[], opts: Pace = {}): Script {
  return async (ctx) => {
    const script = new ResponsesScript(ctx);
    script.start();
    const item = { id: 'msg_upstream', type: 'message', status: 'in_progress', role: 'assistant', content: [] };
    script.event('response.output_item.added', { output_index: 0, item });
    script.event('response.content_part.added', {
      item_id: item.id,
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
    });
    for (const delta of pieces) {
      script.event('response.output_text.delta', { item_id: item.id, output_index: 0, content_index: 0, delta, logprobs: [] });
      await ctx.wait(opts.paceMs ?? 2);
    }
    if (opts.stallAfter) return void (await ctx.closed);
    const text = pieces.join('');
    const done = { ...item, status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] };
    script.event('response.output_text.done', { item_id: item.id, output_index: 0, content_index: 0, text, logprobs: [] });
    script.event('response.content_part.done', { item_id: item.id, output_index: 0, content_index: 0, part: done.content[0] });
    script.event('response.output_item.done', { output_index: 0, item: done });
    script.complete([done]);
  };
}

/** Ollama's /api/chat streaming `pieces` as content lines (after `thinking` ones), each line written in two halves. */
export function ollamaContent(pieces: string[], opts: Pace & { thinking?: string[]; pause?: { after: number; ms: number } } = {}): Script {
  return async (ctx) => {
    startOllamaStream(ctx);
    for (const thought of opts.thinking ?? []) await inHalves(ctx, ollamaLineText({ thinking: thought }));
    for (const [i, piece] of pieces.entries()) {
      await inHalves(ctx, ollamaLineText({ content: piece }));
      if (opts.pause?.after === i) await ctx.wait(opts.pause.ms);
      if (opts.paceMs) await ctx.wait(opts.paceMs);
    }
    if (opts.stallAfter) return void (await ctx.closed);
    ollamaDone(ctx, 40, 12);
  };
}

/** One event (or line) written as two TCP writes, its first half first. */
async function inHalves(ctx: ScriptContext, text: string): Promise<void> {
  const cut = Math.floor(text.length / 2);
  ctx.raw(text.slice(0, cut));
  await ctx.wait(2);
  ctx.raw(text.slice(cut));
  await ctx.wait(2);
}

/** Splits a form's text into pieces that cut its tags in the middle (`<tool_` | `call>`). */
export function piecesOf(text: string, size = 7): string[] {
  const pieces: string[] = [];
  for (let at = 0; at < text.length; at += size) pieces.push(text.slice(at, at + size));
  return pieces;
}

/** A native tool call streamed by an OpenAI-compatible cloud tier. */
export const nativeBashCall: Script = (ctx) => {
  ctx.startStream();
  ctx.role();
  ctx.event(chunk({ tool_calls: [{ index: 0, id: 'call_cloud1', type: 'function', function: { name: 'Bash', arguments: '' } }] }));
  ctx.event(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"command":"pwd"}' } }] }));
  ctx.finish('tool_calls');
  ctx.done();
};

export interface LocalRouteOptions {
  /** A cloud tier (an OpenAI-compatible fake) after the local one; default true. */
  cloud?: boolean;
  localExtra?: Record<string, unknown>;
  timeouts?: Record<string, number>;
  usageDb?: string;
  routeKeys?: Record<string, unknown>;
  deadline_ms?: number;
}

/** Route `chat`: a local tier (`local`: its server type) on a fake of its own, and a cloud tier behind it. */
export async function localRoute(h: ReturnType<typeof useHarness>, local: 'openai' | 'ollama', opts: LocalRouteOptions = {}) {
  const localFake = await h.fake();
  const cloud = await h.fake();
  const tiers: TierSpec[] = [
    {
      name: 'local',
      url: local === 'ollama' ? `http://127.0.0.1:${localFake.port}` : localFake.url,
      type: local,
      model: 'qwen2.5-coder:7b',
      extra: opts.localExtra,
      timeouts: opts.timeouts,
    },
  ];
  if (opts.cloud !== false) tiers.push({ name: 'cloud', url: cloud.url });
  const top = opts.usageDb ? { usage: { path: opts.usageDb } } : undefined;
  const proxy = await h.proxy({ tiers, routeKeys: opts.routeKeys, deadline_ms: opts.deadline_ms, top });
  return { local: localFake, cloud, proxy };
}
