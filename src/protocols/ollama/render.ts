import { parseArguments } from '../core/fields.js';
import type { FinishReason, NeutralResponse } from '../core/neutral.js';
import type { StreamPart } from '../core/stream-part.js';
import type { StreamRenderer } from '../core/stream-output.js';
import { mergeUsage, type Usage } from '../core/usage.js';
import { WholeCalls } from '../core/whole-calls.js';

/** Which of Ollama's two answers: /api/chat's `message`, or /api/generate's `response`. */
export type OllamaForm = 'chat' | 'generate';

/** Ollama says `stop` after tool calls too, and has no word for a filtered answer. */
const DONE_REASON: Record<FinishReason, string> = { stop: 'stop', length: 'length', tool_calls: 'stop', content_filter: 'stop' };

const NS_PER_MS = 1e6;

/**
 * Stream parts as Ollama's NDJSON lines, one JSON object a line as its server writes them
 * (field order included): `{"model","created_at","message":{"role":"assistant","content"},"done":false}`
 * for a chat (`"response"` for generate), thinking in `thinking`, each tool call whole in
 * `tool_calls` once its arguments are complete, and a last line with `"done":true`, the
 * `done_reason`, the counts and the durations in nanoseconds. Ollama has no blocks and no
 * opening: nothing is written before the first content.
 */
export class OllamaRenderer implements StreamRenderer {
  private finish: FinishReason = 'stop';
  private usage: Usage | undefined;
  private firstContentAt: number | undefined;
  private readonly whole = new WholeCalls();
  private calls = 0;
  /** The model as JSON, and the time stamp of the millisecond last written (most lines of a burst share one). */
  private modelJson: string;
  private stampMs = 0;
  private stamp = '';

  constructor(
    private model: string,
    private readonly form: OllamaForm,
    /** performance.now() when the request arrived: the durations count from there. */
    private readonly startedAt: number,
  ) {
    this.modelJson = JSON.stringify(model);
  }

  render(parts: readonly StreamPart[]): string {
    let out = '';
    for (const part of parts) {
      switch (part.type) {
        case 'text-delta':
          if (part.delta !== '') out += this.textLine(part.delta, false);
          break;
        case 'reasoning-delta':
          if (part.delta !== '') out += this.textLine(part.delta, true);
          break;
        case 'tool-input-start':
        case 'tool-input-delta':
        case 'tool-input-end': {
          const call = this.whole.take(part);
          if (call) out += this.line(this.toolCall(call.id, call.name, call.args));
          break;
        }
        case 'finish':
          this.finish = part.reason;
          break;
        case 'usage':
          this.usage = mergeUsage(this.usage, part.usage);
          break;
        default:
          break;
      }
    }
    return out;
  }

  /** Goes on with a stream the client already has from a relayed upstream (a mid-stream resume): its model, its tool calls counted. */
  continueAs(model: string | undefined, calls: number): void {
    if (model !== undefined) {
      this.model = model;
      this.modelJson = JSON.stringify(model);
    }
    this.calls = calls;
  }

  end(): string {
    // A stream that broke inside a tool call's arguments never completes it: what is there is sent.
    let out = '';
    for (const call of this.whole.drain()) out += this.line(this.toolCall(call.id, call.name, call.args));
    const now = performance.now();
    const first = this.firstContentAt ?? now;
    const last = { ...this.content(''), done: true, done_reason: DONE_REASON[this.finish] };
    return `${out}${JSON.stringify(withMetrics(last, this.usage, now - this.startedAt, first - this.startedAt, now - first))}\n`;
  }

  error(message: string): string {
    return ollamaStreamError(message);
  }

  /**
   * A line of text or thinking, written out rather than stringified: one per upstream event,
   * on the hot path of every translated stream (the same bytes JSON.stringify would make).
   */
  private textLine(delta: string, thinking: boolean): string {
    this.firstContentAt ??= performance.now();
    const head = `{"model":${this.modelJson},"created_at":"${this.now()}",`;
    const text = JSON.stringify(delta);
    if (this.form === 'generate') return `${head}${thinking ? `"response":"","thinking":${text}` : `"response":${text}`},"done":false}\n`;
    return `${head}"message":{"role":"assistant",${thinking ? `"content":"","thinking":${text}` : `"content":${text}`}},"done":false}\n`;
  }

  private now(): string {
    const ms = Date.now();
    if (ms !== this.stampMs) {
      this.stampMs = ms;
      this.stamp = new Date(ms).toISOString();
    }
    return this.stamp;
  }

  /** One line's fields before `done`, in the order Ollama writes them. */
  private content(text: string, thinking?: string): Record<string, unknown> {
    const base = { model: this.model, created_at: this.now() };
    if (this.form === 'generate') return thinking === undefined ? { ...base, response: text } : { ...base, response: text, thinking };
    return { ...base, message: thinking === undefined ? { role: 'assistant', content: text } : { role: 'assistant', content: text, thinking } };
  }

  private toolCall(id: string, name: string, args: string): Record<string, unknown> {
    const line = this.content('');
    const call = { id, function: { index: this.calls++, name, arguments: parseArguments(args) } };
    if (this.form === 'generate') return { ...line, tool_calls: [call] };
    return { ...line, message: { ...(line.message as Record<string, unknown>), tool_calls: [call] } };
  }

  private line(fields: Record<string, unknown>): string {
    this.firstContentAt ??= performance.now();
    return `${JSON.stringify({ ...fields, done: false })}\n`;
  }
}

/** A whole neutral answer as Ollama's one JSON object (`"stream": false`). */
export function renderOllamaResponse(response: NeutralResponse, model: string, form: OllamaForm, startedAt: number): string {
  let text = '';
  let thinking = '';
  const calls: Record<string, unknown>[] = [];
  for (const part of response.content) {
    if (part.type === 'text') text += part.text;
    else if (part.type === 'reasoning') thinking += part.text;
    else calls.push({ id: part.id, function: { index: calls.length, name: part.name, arguments: parseArguments(part.arguments) } });
  }
  const base: Record<string, unknown> = { model, created_at: new Date().toISOString() };
  if (form === 'generate') {
    base.response = text;
    if (thinking) base.thinking = thinking;
  } else {
    const message: Record<string, unknown> = { role: 'assistant', content: text };
    if (thinking) message.thinking = thinking;
    if (calls.length > 0) message.tool_calls = calls;
    base.message = message;
  }
  const total = performance.now() - startedAt;
  const answer = withMetrics({ ...base, done: true, done_reason: DONE_REASON[response.finishReason] }, response.usage, total, 0, total);
  if (form === 'generate' && calls.length > 0) answer.tool_calls = calls;
  return JSON.stringify(answer);
}

/** Ollama's metrics after `done_reason`: durations in nanoseconds (its load time unknown here: 0), counts when known. */
function withMetrics(fields: Record<string, unknown>, usage: Usage | undefined, totalMs: number, promptMs: number, evalMs: number): Record<string, unknown> {
  const out: Record<string, unknown> = { ...fields, total_duration: ns(totalMs), load_duration: 0 };
  if (usage) out.prompt_eval_count = usage.prompt_tokens;
  out.prompt_eval_duration = ns(promptMs);
  if (usage) out.eval_count = usage.completion_tokens;
  out.eval_duration = ns(evalMs);
  return out;
}

function ns(ms: number): number {
  return Math.max(0, Math.round(ms * NS_PER_MS));
}

/** The line an Ollama client gets when a committed stream cannot go on: its error shape, and the stream ends. */
export function ollamaStreamError(message: string): string {
  return `${JSON.stringify({ error: `llm-route: ${message}` })}\n`;
}
