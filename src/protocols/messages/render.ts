import { parseArguments } from '../fields.js';
import { newId } from '../ids.js';
import { type FinishReason, type NeutralEvent, type NeutralResponse, settledFinish } from '../neutral.js';
import type { StreamRenderer } from '../types.js';
import { mergeUsage, type Usage } from '../usage.js';
import { messagesStreamError } from './stream-error.js';
import { toAnthropicUsage } from './usage.js';

const STOP: Record<FinishReason, string> = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use', content_filter: 'refusal' };

type BlockType = 'text' | 'thinking' | 'tool_use';

/**
 * Neutral events as Anthropic Messages events: message_start with the first content, one
 * content block per run of text, thinking or a tool call (start, deltas, stop), and at the
 * end message_delta (stop reason and the whole usage, which other protocols report last)
 * and message_stop.
 */
export class MessagesRenderer implements StreamRenderer {
  private readonly id = newId('msg_');
  private started = false;
  private open: { type: BlockType; index: number } | null = null;
  private nextBlock = 0;
  /** Neutral tool-call index → its content block index. */
  private readonly toolBlocks = new Map<number, number>();
  private finish: FinishReason = 'stop';
  private usage: Usage | undefined;

  /**
   * `inputEstimate`: the prompt's tokens as llm-route counts them before sending. Other
   * protocols report usage only at the end, so message_start carries this estimate and
   * message_delta the upstream's own count, which the Anthropic SDK and Claude Code take
   * over the start's.
   */
  constructor(private readonly model: string, private readonly inputEstimate: () => number = () => 0) {}

  render(events: readonly NeutralEvent[]): string {
    let out = '';
    for (const event of events) {
      switch (event.type) {
        case 'text':
          out += this.into('text', { type: 'text_delta', text: event.delta });
          break;
        case 'reasoning':
          out += this.into('thinking', { type: 'thinking_delta', thinking: event.delta });
          break;
        case 'reasoning_signature':
          if (this.open?.type === 'thinking') out += this.delta(this.open.index, { type: 'signature_delta', signature: event.signature });
          break;
        case 'tool_call_start': {
          out += this.start() + this.close();
          const index = this.nextBlock++;
          this.toolBlocks.set(event.index, index);
          this.open = { type: 'tool_use', index };
          out += sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: event.id, name: event.name, input: {} } });
          break;
        }
        case 'tool_call_delta': {
          const index = this.toolBlocks.get(event.index);
          if (index !== undefined) out += this.delta(index, { type: 'input_json_delta', partial_json: event.delta });
          break;
        }
        case 'finish':
          this.finish = event.reason;
          break;
        case 'usage':
          this.usage = mergeUsage(this.usage, event.usage);
          break;
        case 'error':
          break;
      }
    }
    return out;
  }

  end(): string {
    const stop = STOP[settledFinish(this.finish, this.toolBlocks.size > 0)];
    return this.start() + this.close()
      + sse('message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: this.usageSoFar() })
      + sse('message_stop', { type: 'message_stop' });
  }

  error(message: string): string {
    return messagesStreamError(message);
  }

  /** A delta into the open block of `type`, opening one (and closing another) first when needed. */
  private into(type: 'text' | 'thinking', delta: Record<string, unknown>): string {
    let out = this.start();
    if (this.open?.type !== type) {
      out += this.close();
      const index = this.nextBlock++;
      this.open = { type, index };
      const block = type === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' };
      out += sse('content_block_start', { type: 'content_block_start', index, content_block: block });
    }
    return out + this.delta(this.open.index, delta);
  }

  private delta(index: number, delta: Record<string, unknown>): string {
    return sse('content_block_delta', { type: 'content_block_delta', index, delta });
  }

  private close(): string {
    if (!this.open) return '';
    const index = this.open.index;
    this.open = null;
    return sse('content_block_stop', { type: 'content_block_stop', index });
  }

  /** The upstream's usage when it has reported one, else the estimate of the prompt and no output yet. */
  private usageSoFar(): Record<string, number> {
    return this.usage ? toAnthropicUsage(this.usage) : { ...toAnthropicUsage(undefined), input_tokens: this.inputEstimate() };
  }

  private start(): string {
    if (this.started) return '';
    this.started = true;
    const usage = this.usageSoFar();
    return sse('message_start', {
      type: 'message_start',
      message: { id: this.id, type: 'message', role: 'assistant', model: this.model, content: [], stop_reason: null, stop_sequence: null, usage },
    });
  }
}

/** One Anthropic SSE event: the SDKs read the `event:` line. */
export function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** A whole neutral answer as an Anthropic message. */
export function renderMessagesResponse(response: NeutralResponse, model: string): string {
  const content = response.content.flatMap((part): Record<string, unknown>[] => {
    if (part.type === 'text') return [{ type: 'text', text: part.text }];
    if (part.type === 'tool_call') return [{ type: 'tool_use', id: part.id, name: part.name, input: parseArguments(part.arguments) }];
    return [{ type: 'thinking', thinking: part.text, signature: part.signature ?? '' }];
  });
  const madeToolCalls = response.content.some((part) => part.type === 'tool_call');
  return JSON.stringify({
    id: newId('msg_'), type: 'message', role: 'assistant', model, content,
    stop_reason: STOP[settledFinish(response.finishReason, madeToolCalls)], stop_sequence: null,
    usage: toAnthropicUsage(response.usage),
  });
}
