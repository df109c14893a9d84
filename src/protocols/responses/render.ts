import { newId } from '../core/ids.js';
import { type FinishReason, settledFinish } from '../core/neutral.js';
import type { StreamPart } from '../core/stream-part.js';
import type { StreamRenderer } from '../core/stream-output.js';
import { mergeUsage, type Usage } from '../core/usage.js';
import { toResponsesUsage } from './usage.js';

export type Item = Record<string, unknown> & { id: string; type: 'message' | 'reasoning' | 'function_call' };

/** An output item being streamed: its place in `output`, and the text it has so far. */
interface OpenItem {
  item: Item;
  index: number;
  text: string;
}

/**
 * Stream parts as Responses events, with the indices the SDKs accumulate by: at the first
 * content response.created and response.in_progress; per text block a message item (item
 * added, content part added, text deltas, then the three done events at its end); per
 * reasoning block a reasoning item with a summary; per tool call a function_call item with
 * argument deltas; at the end response.completed (or response.incomplete) with every item and
 * the usage. A text or reasoning item opens with its block's first delta (an empty block is
 * not drawn) and closes at the block's end part, or when another item opens.
 */
export class ResponsesRenderer implements StreamRenderer {
  private id = newId('resp_');
  private createdAt = Math.floor(Date.now() / 1000);
  private sequence = 0;
  private started = false;
  private open: OpenItem | null = null;
  private readonly output: Item[] = [];
  /** Tool-call id → its item. */
  private readonly calls = new Map<string, OpenItem>();
  private finish: FinishReason = 'stop';
  private usage: Usage | undefined;

  /** `namespaces`: tool name → the Responses namespace it was given in, named again in its calls. */
  constructor(
    private model: string,
    private readonly namespaces: ReadonlyMap<string, string> = new Map(),
  ) {}

  /**
   * Goes on with a stream the client already has from a relayed upstream (a tool call written as
   * text after relayed text): its response's id, time and model, its events numbered on from
   * `sequence`, its output items so far (the one still open, with its text, continued or closed
   * by the next part), so response.completed lists them all.
   */
  continueAs(seen: { id: string; createdAt: number; model: string; sequence: number; output: Item[]; open: { index: number; text: string } | null }): void {
    if (seen.id) this.id = seen.id;
    if (seen.createdAt) this.createdAt = seen.createdAt;
    if (seen.model) this.model = seen.model;
    this.sequence = seen.sequence;
    this.started = true;
    for (const item of seen.output) this.output.push(item);
    const open = seen.open;
    this.open = open && this.output[open.index] ? { item: this.output[open.index], index: open.index, text: open.text } : null;
  }

  render(parts: readonly StreamPart[]): string {
    let out = '';
    for (const part of parts) {
      switch (part.type) {
        case 'text-delta': {
          out += this.ensure('message');
          const open = this.open as OpenItem;
          open.text += part.delta;
          out += this.sse('response.output_text.delta', { item_id: open.item.id, output_index: open.index, content_index: 0, delta: part.delta, logprobs: [] });
          break;
        }
        case 'reasoning-delta': {
          out += this.ensure('reasoning');
          const open = this.open as OpenItem;
          open.text += part.delta;
          out += this.sse('response.reasoning_summary_text.delta', { item_id: open.item.id, output_index: open.index, summary_index: 0, delta: part.delta });
          break;
        }
        case 'text-end':
          if (this.open?.item.type === 'message') out += this.close();
          break;
        case 'reasoning-end':
          if (this.open?.item.type === 'reasoning') out += this.close();
          break;
        case 'tool-input-start': {
          out += this.begin() + this.close();
          const item: Item = { id: newId('fc_'), type: 'function_call', status: 'in_progress', call_id: part.id, name: part.toolName, arguments: '' };
          const namespace = this.namespaces.get(part.toolName);
          if (namespace) item.namespace = namespace;
          const open = this.add(item);
          this.calls.set(part.id, open);
          out += this.sse('response.output_item.added', { output_index: open.index, item: { ...item } });
          break;
        }
        case 'tool-input-delta': {
          const call = this.calls.get(part.id);
          if (!call) break;
          call.text += part.delta;
          out += this.sse('response.function_call_arguments.delta', { item_id: call.item.id, output_index: call.index, delta: part.delta });
          break;
        }
        case 'tool-input-end':
          if (this.open !== null && this.open === this.calls.get(part.id)) out += this.close();
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

  end(): string {
    const out = this.begin() + this.close();
    const finish = settledFinish(this.finish, this.calls.size > 0);
    const incomplete = finish === 'length' || finish === 'content_filter';
    const response = this.response(incomplete ? 'incomplete' : 'completed');
    if (incomplete) response.incomplete_details = { reason: finish === 'length' ? 'max_output_tokens' : 'content_filter' };
    response.usage = toResponsesUsage(this.usage);
    return out + this.sse(incomplete ? 'response.incomplete' : 'response.completed', { response });
  }

  error(message: string): string {
    return this.sse('error', { code: 'stream_interrupted', message: `llm-route: ${message}`, param: null });
  }

  /** Opens an item of `type` unless it is the one open (a text run stays one message). */
  private ensure(type: 'message' | 'reasoning'): string {
    if (this.open?.item.type === type) return '';
    let out = this.begin() + this.close();
    if (type === 'message') {
      const open = this.add({ id: newId('msg_'), type: 'message', status: 'in_progress', role: 'assistant', content: [] });
      out += this.sse('response.output_item.added', { output_index: open.index, item: { ...open.item, content: [] } });
      out += this.sse('response.content_part.added', {
        item_id: open.item.id,
        output_index: open.index,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      });
    } else {
      const open = this.add({ id: newId('rs_'), type: 'reasoning', summary: [] });
      out += this.sse('response.output_item.added', { output_index: open.index, item: { ...open.item, summary: [] } });
      out += this.sse('response.reasoning_summary_part.added', {
        item_id: open.item.id,
        output_index: open.index,
        summary_index: 0,
        part: { type: 'summary_text', text: '' },
      });
    }
    return out;
  }

  private add(item: Item): OpenItem {
    const open = { item, index: this.output.length, text: '' };
    this.output.push(item);
    this.open = open;
    return open;
  }

  /** Finishes the open item: its done events, and its final form in `output`. */
  private close(): string {
    const open = this.open;
    if (!open) return '';
    this.open = null;
    const { item, index, text } = open;
    const ids = { item_id: item.id, output_index: index };
    if (item.type === 'message') {
      const part = { type: 'output_text', text, annotations: [] };
      Object.assign(item, { status: 'completed', content: [part] });
      return (
        this.sse('response.output_text.done', { ...ids, content_index: 0, text, logprobs: [] }) +
        this.sse('response.content_part.done', { ...ids, content_index: 0, part }) +
        this.sse('response.output_item.done', { output_index: index, item })
      );
    }
    if (item.type === 'reasoning') {
      const part = { type: 'summary_text', text };
      item.summary = [part];
      return (
        this.sse('response.reasoning_summary_text.done', { ...ids, summary_index: 0, text }) +
        this.sse('response.reasoning_summary_part.done', { ...ids, summary_index: 0, part }) +
        this.sse('response.output_item.done', { output_index: index, item })
      );
    }
    Object.assign(item, { status: 'completed', arguments: text });
    return (
      this.sse('response.function_call_arguments.done', { ...ids, arguments: text }) + this.sse('response.output_item.done', { output_index: index, item })
    );
  }

  private begin(): string {
    if (this.started) return '';
    this.started = true;
    const response = this.response('in_progress');
    return this.sse('response.created', { response }) + this.sse('response.in_progress', { response });
  }

  private response(status: string): Record<string, unknown> {
    return {
      id: this.id,
      object: 'response',
      created_at: this.createdAt,
      status,
      model: this.model,
      output: this.output.map((item) => ({ ...item })),
      error: null,
      incomplete_details: null,
      usage: null,
      parallel_tool_calls: true,
      tool_choice: 'auto',
      tools: [],
    };
  }

  private sse(type: string, data: Record<string, unknown>): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.sequence++, ...data })}\n\n`;
  }
}
