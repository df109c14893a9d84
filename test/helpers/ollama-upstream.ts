import type { Script, ScriptContext } from './fake-upstream.js';

/**
 * Scripts for a FakeUpstream playing Ollama's native /api/chat and /api/generate, with its exact
 * NDJSON lines (field order as its server marshals them: `done`, then `done_reason`, then the metrics).
 */

const CREATED_AT = '2026-11-30T10:00:00.000000Z';

export function startOllamaStream(ctx: ScriptContext): void {
  ctx.res.writeHead(200, { 'content-type': 'application/x-ndjson' });
  ctx.res.flushHeaders();
}

export function ollamaLine(ctx: ScriptContext, message: Record<string, unknown>, extra: Record<string, unknown> = {}): void {
  ctx.raw(ollamaLineText(message, extra));
}

/** One line of a streamed answer, as Ollama writes it. */
export function ollamaLineText(message: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  return `${JSON.stringify({ model: 'qwen2.5:7b', created_at: CREATED_AT, message: { role: 'assistant', content: '', ...message }, done: false, ...extra })}\n`;
}

export function ollamaDone(ctx: ScriptContext, promptTokens: number, evalTokens: number, doneReason = 'stop'): void {
  ctx.raw(
    `${JSON.stringify({
      model: 'qwen2.5:7b',
      created_at: CREATED_AT,
      message: { role: 'assistant', content: '' },
      done: true,
      done_reason: doneReason,
      total_duration: 4883583458,
      load_duration: 1334875,
      prompt_eval_count: promptTokens,
      prompt_eval_duration: 342546000,
      eval_count: evalTokens,
      eval_duration: 4535599000,
    })}\n`,
  );
  ctx.res.end();
}

/** A streamed text answer. */
export function ollamaTextStream(words: string[], usage: [number, number] = [26, words.length]): Script {
  return (ctx) => {
    startOllamaStream(ctx);
    for (const content of words) ollamaLine(ctx, { content });
    ollamaDone(ctx, usage[0], usage[1]);
  };
}

/** A whole (stream: false) answer. */
export function ollamaWhole(message: Record<string, unknown>, promptTokens = 12, evalTokens = 4): Record<string, unknown> {
  return {
    model: 'qwen2.5:7b',
    created_at: CREATED_AT,
    message: { role: 'assistant', content: '', ...message },
    done: true,
    done_reason: 'stop',
    total_duration: 1,
    load_duration: 1,
    prompt_eval_count: promptTokens,
    prompt_eval_duration: 1,
    eval_count: evalTokens,
    eval_duration: 1,
  };
}

/** A streamed /api/generate answer: each word in `response`, then the done line (with its `context`). */
export function ollamaGenerateStream(words: string[], usage: [number, number] = [26, words.length]): Script {
  return (ctx) => {
    startOllamaStream(ctx);
    for (const response of words) ctx.raw(`${JSON.stringify({ model: 'qwen2.5:7b', created_at: CREATED_AT, response, done: false })}\n`);
    ctx.raw(
      `${JSON.stringify({
        model: 'qwen2.5:7b',
        created_at: CREATED_AT,
        response: '',
        done: true,
        done_reason: 'stop',
        context: [1, 2, 3],
        total_duration: 10706818083,
        load_duration: 6338219291,
        prompt_eval_count: usage[0],
        prompt_eval_duration: 130079000,
        eval_count: usage[1],
        eval_duration: 4232710000,
      })}\n`,
    );
    ctx.res.end();
  };
}

/** Ollama's `created_at`: Go's RFC 3339 with nanoseconds. */
const GO_CREATED_AT = '2026-11-30T10:00:00.123456789Z';

/**
 * Ollama's answer to a load request (/api/generate with no prompt, /api/chat with no messages):
 * one JSON object whatever `stream` said, written by gin's c.JSON (`application/json;
 * charset=utf-8`, no newline), `model` as the request named it, `done_reason` "unload" when
 * `keep_alive` is zero (ollama's server/routes.go, GenerateHandler and ChatHandler).
 */
export function ollamaLoadAnswer(ctx: ScriptContext): void {
  const body = ctx.body;
  const done = body.keep_alive === 0 || body.keep_alive === '0' || body.keep_alive === '0s' ? 'unload' : 'load';
  const model = JSON.stringify(body.model);
  const text = ctx.req.url?.endsWith('/api/generate')
    ? `{"model":${model},"created_at":"${GO_CREATED_AT}","response":"","done":true,"done_reason":"${done}"}`
    : `{"model":${model},"created_at":"${GO_CREATED_AT}","message":{"role":"assistant","content":""},"done":true,"done_reason":"${done}"}`;
  ctx.res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  ctx.res.end(text);
}
