import { newId } from '../ids.js';
import { type FinishReason, type NeutralEvent, type NeutralResponse, settledFinish } from '../neutral.js';
import type { StreamRenderer } from '../types.js';
import { mergeUsage, type Usage } from '../usage.js';
import { chatStreamError } from './stream-error.js';
import { toChatUsage } from './usage.js';

const FINISH: Record<FinishReason, string> = { stop: 'stop', length: 'length', tool_calls: 'tool_calls', content_filter: 'content_filter' };

/** Neutral events as Chat Completions chunks: role with the first delta, finish, usage (when asked), [DONE]. */
export class ChatRenderer implements StreamRenderer {
  private id = newId('chatcmpl-');
  private created = Math.floor(Date.now() / 1000);
  private started = false;
  private finished = false;
  private madeToolCalls = false;
  private usage: Usage | undefined;

  constructor(private model: string, private readonly wantsUsage: boolean) {}

  render(events: readonly NeutralEvent[]): string {
    let out = '';
    for (const event of events) {
      switch (event.type) {
        case 'text':
          out += this.delta({ content: event.delta });
          break;
        case 'reasoning':
          out += this.delta({ reasoning_content: event.delta });
          break;
        case 'tool_call_start':
          this.madeToolCalls = true;
          out += this.delta({ tool_calls: [{ index: event.index, id: event.id, type: 'function', function: { name: event.name, arguments: '' } }] });
          break;
        case 'tool_call_delta':
          out += this.delta({ tool_calls: [{ index: event.index, function: { arguments: event.delta } }] });
          break;
        case 'finish':
          out += this.finish(event.reason);
          break;
        case 'usage':
          this.usage = mergeUsage(this.usage, event.usage);
          break;
        case 'reasoning_signature':
        case 'error':
          break;
      }
    }
    return out;
  }

  /**
   * Goes on with a stream the client already has from a relayed upstream (a mid-stream
   * recovery): its chunk id, created and model, its role already sent.
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
    return sse({ ...this.base(), choices: [{ index: 0, delta, finish_reason: FINISH[settledFinish(reason, this.madeToolCalls)] }] });
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
  const text = response.content.filter((part) => part.type === 'text').map((part) => part.text).join('');
  const reasoning = response.content.filter((part) => part.type === 'reasoning').map((part) => part.text).join('');
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
