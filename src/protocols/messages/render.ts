import { parseArguments } from '../core/fields.js';
import { newId } from '../core/ids.js';
import { type FinishReason, type NeutralResponse, settledFinish } from '../core/neutral.js';
import type { StreamPart } from '../core/stream-part.js';
import type { StreamRenderer } from '../core/stream-output.js';
import { mergeUsage, type Usage } from '../core/usage.js';
import { toAnthropicUsage } from './usage.js';

const STOP: Record<FinishReason, string> = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use', content_filter: 'refusal' };

type BlockType = 'text' | 'thinking' | 'tool_use';

/**
 * Stream parts as Anthropic Messages events: message_start with the first content, one
 * content block per block of the parts (start, deltas, stop: a text or reasoning block opens
 * with its first delta, so an empty one is not drawn, and closes at its end part), and at the
 * end message_delta (stop reason and the whole usage, which other protocols report last)
 * and message_stop.
 */
export class MessagesRenderer implements StreamRenderer {
  private readonly id = newId('msg_');
  private started = false;
  private open: { type: BlockType; index: number } | null = null;
  private nextBlock = 0;
  /** Tool-call id → its content block index. */
  private readonly toolBlocks = new Map<string, number>();
  private finish: FinishReason = 'stop';
  private usage: Usage | undefined;

  /**
   * `inputEstimate`: the prompt's tokens as llm-route counts them before sending. Other
   * protocols report usage only at the end, so message_start carries this estimate and
   * message_delta the upstream's own count, which the Anthropic SDK and Claude Code take
   * over the start's.
   */
  constructor(
    private readonly model: string,
    private readonly inputEstimate: () => number = () => 0,
  ) {}

  render(parts: readonly StreamPart[]): string {
    let out = '';
    for (const part of parts) {
      switch (part.type) {
        case 'text-delta':
          out += this.into('text', { type: 'text_delta', text: part.delta });
          break;
        case 'reasoning-delta':
          out += this.into('thinking', { type: 'thinking_delta', thinking: part.delta });
          break;
        case 'text-end':
          if (this.open?.type === 'text') out += this.close();
          break;
        case 'reasoning-end':
          if (this.open?.type !== 'thinking') break;
          if (part.signature !== undefined) out += this.delta(this.open.index, { type: 'signature_delta', signature: part.signature });
          out += this.close();
          break;
        case 'tool-input-start': {
          out += this.start() + this.close();
          const index = this.nextBlock++;
          this.toolBlocks.set(part.id, index);
          this.open = { type: 'tool_use', index };
          out += sse('content_block_start', {
            type: 'content_block_start',
            index,
            content_block: { type: 'tool_use', id: part.id, name: part.toolName, input: {} },
          });
          break;
        }
        case 'tool-input-delta': {
          const index = this.toolBlocks.get(part.id);
          if (index !== undefined) out += this.delta(index, { type: 'input_json_delta', partial_json: part.delta });
          break;
        }
        case 'tool-input-end':
          if (this.open?.type === 'tool_use' && this.open.index === this.toolBlocks.get(part.id)) out += this.close();
          break;
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

  /**
   * Goes on with a stream the client already has from a relayed upstream (a tool call written as
   * text after relayed text): its message_start sent, its blocks numbered up to `nextBlock`, the
   * one still open (a text or thinking block) continued, the usage it reported so far kept.
   */
  continueAs(seen: { open: { type: 'text' | 'thinking'; index: number } | null; nextBlock: number; usage: Usage | undefined }): void {
    this.started = true;
    this.open = seen.open;
    this.nextBlock = seen.nextBlock;
    this.usage = seen.usage;
  }

  end(): string {
    const stop = STOP[settledFinish(this.finish, this.toolBlocks.size > 0)];
    return (
      this.start() +
      this.close() +
      sse('message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: this.usageSoFar() }) +
      sse('message_stop', { type: 'message_stop' })
    );
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
    id: newId('msg_'),
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: STOP[settledFinish(response.finishReason, madeToolCalls)],
    stop_sequence: null,
    usage: toAnthropicUsage(response.usage),
  });
}

/** The event a Messages client gets when a committed stream cannot go on (the SDKs raise on it); no message_stop follows. */
export function messagesStreamError(message: string): string {
  return `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'api_error', message: `llm-route: ${message}` } })}\n\n`;
}
