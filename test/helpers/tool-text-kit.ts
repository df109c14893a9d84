import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { chunk, type Script, type ScriptContext } from './fake-upstream.js';
import { ollamaDone, ollamaLineText, startOllamaStream } from './ollama-upstream.js';
import type { RunningProxy } from './proxy.js';

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

/**
 * An OpenAI-compatible server (llama-server, vLLM, LM Studio without a tool parser) streaming
 * `pieces` as content deltas; each event is written in two halves, so events and the form's
 * tags are split across chunks the way a real server's TCP writes split them.
 */
export function sseContent(pieces: string[], opts: { stallAfter?: boolean } = {}): Script {
  return async (ctx) => {
    ctx.startStream();
    ctx.role();
    for (const piece of pieces) await inHalves(ctx, `data: ${JSON.stringify(chunk({ content: piece }))}\n\n`);
    if (opts.stallAfter) return void (await ctx.closed);
    ctx.finish();
    ctx.usage(40, 12);
    ctx.done();
  };
}

/** Ollama's /api/chat streaming `pieces` as content lines (after `thinking` ones), each line written in two halves. */
export function ollamaContent(pieces: string[], opts: { stallAfter?: boolean; thinking?: string[]; pause?: { after: number; ms: number } } = {}): Script {
  return async (ctx) => {
    startOllamaStream(ctx);
    for (const thought of opts.thinking ?? []) await inHalves(ctx, ollamaLineText({ thinking: thought }));
    for (const [i, piece] of pieces.entries()) {
      await inHalves(ctx, ollamaLineText({ content: piece }));
      if (opts.pause?.after === i) await ctx.wait(opts.pause.ms);
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
