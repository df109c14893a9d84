import type { Script, ScriptContext } from './fake-upstream.js';

/**
 * Scripts for a FakeUpstream playing Anthropic's Messages API, with the exact event shapes
 * api.anthropic.com sends (event: lines, a ping after the first block start, the first
 * input_json_delta empty, output usage in message_delta).
 */

export function anthropicEvent(ctx: ScriptContext, type: string, data: Record<string, unknown>): void {
  ctx.raw(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
}

export function startAnthropicStream(
  ctx: ScriptContext,
  usage: Record<string, number> = { input_tokens: 25, output_tokens: 1 },
  id = 'msg_01FakeUpstream',
): void {
  ctx.res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'request-id': 'req_fake' });
  ctx.res.flushHeaders();
  anthropicEvent(ctx, 'message_start', {
    message: { id, type: 'message', role: 'assistant', content: [], model: 'claude-sonnet-4-5', stop_reason: null, stop_sequence: null, usage },
  });
}

export function anthropicText(ctx: ScriptContext, index: number, words: string[]): void {
  anthropicEvent(ctx, 'content_block_start', { index, content_block: { type: 'text', text: '' } });
  if (index === 0) anthropicEvent(ctx, 'ping', {});
  for (const text of words) anthropicEvent(ctx, 'content_block_delta', { index, delta: { type: 'text_delta', text } });
  anthropicEvent(ctx, 'content_block_stop', { index });
}

export function anthropicToolUse(ctx: ScriptContext, index: number, id: string, name: string, jsonPieces: string[]): void {
  anthropicEvent(ctx, 'content_block_start', { index, content_block: { type: 'tool_use', id, name, input: {} } });
  anthropicEvent(ctx, 'content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: '' } });
  for (const piece of jsonPieces) anthropicEvent(ctx, 'content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } });
  anthropicEvent(ctx, 'content_block_stop', { index });
}

export function endAnthropicStream(ctx: ScriptContext, stopReason: string, outputTokens: number, extraUsage: Record<string, number> = {}): void {
  anthropicEvent(ctx, 'message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: outputTokens, ...extraUsage } });
  anthropicEvent(ctx, 'message_stop', {});
  ctx.res.end();
}

/** A whole streamed text answer. */
export function anthropicTextStream(words: string[], opts: { usage?: Record<string, number>; outputTokens?: number } = {}): Script {
  return (ctx) => {
    startAnthropicStream(ctx, opts.usage);
    anthropicText(ctx, 0, words);
    endAnthropicStream(ctx, 'end_turn', opts.outputTokens ?? words.length);
  };
}

/** A whole non-streaming message. */
export function anthropicMessage(
  content: Record<string, unknown>[],
  stopReason = 'end_turn',
  usage: Record<string, number> = { input_tokens: 10, output_tokens: 5 },
): Record<string, unknown> {
  return {
    id: 'msg_01FakeWhole',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage,
  };
}

/** Anthropic's error body. */
export function anthropicError(ctx: ScriptContext, status: number, type: string, message: string): void {
  ctx.json(status, { type: 'error', error: { type, message }, request_id: 'req_fake' });
}
