import { isRecord } from '../../util/is-record.js';
import { stringField } from '../core/fields.js';
import { clearFacts, eventObject } from '../core/json.js';
import { readFactsOfParts } from '../core/part-facts.js';
import { blockEnd, type OpenBlock, type StreamPart } from '../core/stream-part.js';
import { EVENT_DONE, EVENT_USAGE_ONLY, type EventFacts, type StreamReader } from '../core/event-facts.js';
import { chatFinish } from './decode.js';
import { chatUsage } from './usage.js';

/** The block a choice has open, and how it numbers its blocks and tool calls. */
interface ChoiceState {
  open: OpenBlock | null;
  blocks: number;
  /** Upstream tool-call index (-1: a legacy `function_call`) → the call's id. */
  readonly calls: Map<number, string>;
}

/**
 * Reads a Chat Completions stream: `[DONE]`, or a chunk whose choices' deltas become parts.
 * Chat has no blocks on the wire: a run of content or of reasoning is one text or reasoning
 * block, a tool call one tool-input block, and each closes when another starts or the choice
 * finishes. A role-only or empty delta is nothing; a legacy `function_call` delta is a tool call.
 * Every choice is read (its parts carry `choice` when it is not 0), so content in any commits.
 */
export class ChatReader implements StreamReader {
  private readonly parts: StreamPart[] = [];
  private readonly choices: ChoiceState[] = [];

  read(data: string, facts: EventFacts): void {
    const parts = this.parts;
    parts.length = 0;
    facts.parts = parts;
    if (data === '[DONE]') {
      clearFacts(facts);
      facts.flags = EVENT_DONE;
      return;
    }
    const chunk = eventObject(data, facts);
    if (chunk === null) return;
    if (chunk.error != null) {
      parts.push({ type: 'error', message: errorMessage(chunk.error) });
    } else if (isLoadingProgress(chunk)) {
      // Not the model's answer: it neither commits nor reaches a translated client.
    } else if (Array.isArray(chunk.choices)) {
      for (let position = 0; position < chunk.choices.length; position++) {
        const choice: unknown = chunk.choices[position];
        if (isRecord(choice)) this.readChoice(choice, typeof choice.index === 'number' ? choice.index : position);
      }
    }
    const usage = chatUsage(chunk.usage, chunk.timings);
    if (usage) {
      parts.push({ type: 'usage', usage });
      if (Array.isArray(chunk.choices) && chunk.choices.length === 0) facts.flags |= EVENT_USAGE_ONLY;
    }
    readFactsOfParts(parts, facts);
  }

  private readChoice(choice: Record<string, unknown>, index: number): void {
    const state = (this.choices[index] ??= { open: null, blocks: 0, calls: new Map() });
    const delta = choice.delta;
    if (isRecord(delta)) {
      const reasoning = stringField(delta.reasoning_content) || stringField(delta.reasoning);
      if (reasoning) this.run(state, index, 'reasoning', reasoning);
      const content = stringField(delta.content);
      if (content) this.run(state, index, 'text', content);
      const refusal = stringField(delta.refusal);
      if (refusal) this.run(state, index, 'text', refusal);
      if (Array.isArray(delta.tool_calls)) {
        for (let position = 0; position < delta.tool_calls.length; position++) {
          const call: unknown = delta.tool_calls[position];
          if (isRecord(call)) this.toolCall(state, index, typeof call.index === 'number' ? call.index : position, call.id, call.function);
        }
      }
      if (isRecord(delta.function_call)) this.toolCall(state, index, -1, undefined, delta.function_call);
    }
    if (choice.finish_reason != null) {
      this.close(state, index);
      this.push({ type: 'finish', reason: chatFinish(choice.finish_reason) }, index);
    }
  }

  /** A text or reasoning delta: into the open run of its kind, else a new one. */
  private run(state: ChoiceState, choice: number, kind: 'text' | 'reasoning', delta: string): void {
    let open = state.open;
    if (open?.kind !== kind) {
      this.close(state, choice);
      open = state.open = { kind, id: `${kind}-${state.blocks++}` };
      this.push({ type: kind === 'text' ? 'text-start' : 'reasoning-start', id: open.id }, choice);
    }
    this.push(kind === 'text' ? { type: 'text-delta', id: open.id, delta } : { type: 'reasoning-delta', id: open.id, delta }, choice);
  }

  private toolCall(state: ChoiceState, choice: number, upstreamIndex: number, callId: unknown, fn: unknown): void {
    const named = isRecord(fn) ? fn : {};
    let id = state.calls.get(upstreamIndex);
    if (id === undefined) {
      id = stringField(callId) || `call_${state.calls.size}`;
      state.calls.set(upstreamIndex, id);
      this.close(state, choice);
      state.open = { kind: 'tool', id };
      this.push({ type: 'tool-input-start', id, toolName: stringField(named.name) ?? '' }, choice);
    }
    const args = stringField(named.arguments);
    if (args) this.push({ type: 'tool-input-delta', id, delta: args }, choice);
  }

  private close(state: ChoiceState, choice: number): void {
    const open = state.open;
    if (open === null) return;
    state.open = null;
    const end = blockEnd(open);
    if (end) this.push(end, choice);
  }

  private push(part: StreamPart & { choice?: number }, choice: number): void {
    if (choice !== 0) part.choice = choice;
    this.parts.push(part);
  }
}

/**
 * llama-swap's `sendLoadingState` progress while it loads a model: exactly
 * `{"choices":[{"delta":{"reasoning_content":"…"}}]}` (proxy/process.go statusResponseWriter),
 * without the id, object, index and finish_reason every real chunk carries.
 */
function isLoadingProgress(chunk: Record<string, unknown>): boolean {
  if (chunk.id !== undefined || chunk.object !== undefined || !Array.isArray(chunk.choices) || chunk.choices.length !== 1) return false;
  const choice: unknown = chunk.choices[0];
  if (!isRecord(choice) || choice.index !== undefined || choice.finish_reason !== undefined || !isRecord(choice.delta)) return false;
  const keys = Object.keys(choice.delta);
  return keys.length === 1 && keys[0] === 'reasoning_content' && Object.keys(chunk).length === 1;
}

function errorMessage(error: unknown): string {
  if (isRecord(error) && typeof error.message === 'string') return error.message;
  return typeof error === 'string' ? error : 'the upstream reported an error';
}
