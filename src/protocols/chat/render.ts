import { newId } from '../core/ids.js';
import { type FinishReason, type NeutralResponse, settledFinish } from '../core/neutral.js';
import type { StreamPart } from '../core/stream-part.js';
import type { StreamRenderer } from '../core/stream-output.js';
import { mergeUsage, type Usage } from '../core/usage.js';
import { toChatUsage } from './usage.js';

const FINISH: Record<FinishReason, string> = { stop: 'stop', length: 'length', tool_calls: 'tool_calls', content_filter: 'content_filter' };

/**
 * Stream parts as Chat Completions chunks: role with the first delta, finish, usage (when
 * asked), [DONE]. Chat has no blocks: starts and ends draw nothing; tool calls are numbered
 * 0, 1, … in the order they start.
 */
export class ChatRenderer implements StreamRenderer {
  private id = newId('chatcmpl-');
  private created = Math.floor(Date.now() / 1000);
  private started = false;
  private finished = false;
  /** Tool-call id → its index in the chunks. */
  private readonly toolIndex = new Map<string, number>();
  private usage: Usage | undefined;

  constructor(
    private model: string,
    private readonly wantsUsage: boolean,
  ) {}

  render(parts: readonly StreamPart[]): string {
    let out = '';
    for (const part of parts) {
      switch (part.type) {
        case 'text-delta':
          out += this.delta({ content: part.delta });
          break;
        case 'reasoning-delta':
          out += this.delta({ reasoning_content: part.delta });
          break;
        case 'tool-input-start': {
          const index = this.toolIndex.size;
          this.toolIndex.set(part.id, index);
          out += this.delta({ tool_calls: [{ index, id: part.id, type: 'function', function: { name: part.toolName, arguments: '' } }] });
          break;
        }
        case 'tool-input-delta': {
          const index = this.toolIndex.get(part.id);
          if (index !== undefined) out += this.delta({ tool_calls: [{ index, function: { arguments: part.delta } }] });
          break;
        }
        case 'finish':
          out += this.finish(part.reason);
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

  /**
   * Goes on with a stream the client already has from a relayed upstream (a mid-stream
   * resume): its chunk id, created and model, its role already sent.
   */
  continueAs(sent: { id: string; created: number; model: string }): void {
    this.id = sent.id;
    this.created = sent.created;
    this.model = sent.model;
    this.started = true;
  }

  end(): string {
    let out = this.finished ? '' : this.finish('stop');
    if (this.wantsUsage && this.usage) out += sse({ ...this.base(), choices: [], usage: toChatUsage(this.usage) });
    return `${out}data: [DONE]\n\n`;
  }

  error(message: string): string {
    return chatStreamError(message);
  }

  private delta(delta: Record<string, unknown>): string {
    if (!this.started) {
      this.started = true;
      delta = { role: 'assistant', ...delta };
    }
    return sse({ ...this.base(), choices: [{ index: 0, delta, finish_reason: null }] });
  }

  private finish(reason: FinishReason): string {
    if (this.finished) return '';
    this.finished = true;
    const delta = this.started ? {} : { role: 'assistant', content: '' };
    this.started = true;
    return sse({ ...this.base(), choices: [{ index: 0, delta, finish_reason: FINISH[settledFinish(reason, this.toolIndex.size > 0)] }] });
  }

  private base(): Record<string, unknown> {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model };
  }
}

function sse(value: unknown): string {
  return `data: ${JSON.stringify(value)}\n\n`;
}

/** A whole neutral answer as a chat completion. */
export function renderChatResponse(response: NeutralResponse, model: string): string {
  const text = response.content
    .filter((part) => part.type === 'text')
    .map((part) => part.text)
    .join('');
  const reasoning = response.content
    .filter((part) => part.type === 'reasoning')
    .map((part) => part.text)
    .join('');
  const calls = response.content.filter((part) => part.type === 'tool_call');
  const message: Record<string, unknown> = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text };
  if (reasoning) message.reasoning_content = reasoning;
  if (calls.length > 0) message.tool_calls = calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }));
  const body: Record<string, unknown> = {
    id: newId('chatcmpl-'),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, finish_reason: FINISH[settledFinish(response.finishReason, calls.length > 0)] }],
  };
  if (response.usage) body.usage = toChatUsage(response.usage);
  return JSON.stringify(body);
}

/** The one SSE event a Chat Completions client gets when a committed stream cannot go on. */
export function chatStreamError(message: string): string {
  const payload = { error: { message: `llm-route: ${message}`, type: 'upstream_error', code: 'stream_interrupted' } };
  return `data: ${JSON.stringify(payload)}\n\n`;
}
