import { newId } from '../core/ids.js';
import { WholeCalls } from '../core/whole-calls.js';
import { parseArguments } from '../core/fields.js';
import type { FinishReason, NeutralResponse } from '../core/neutral.js';
import type { StreamPart } from '../core/stream-part.js';
import type { StreamRenderer } from '../core/stream-output.js';
import { mergeUsage, type Usage } from '../core/usage.js';
import { streamErrorJson } from './error-body.js';
import { ArrayFrames, type GeminiFrames, SseFrames } from './frames.js';
import { geminiFinish, usageMetadata } from './usage.js';

/** What a request's answers show, read off its body and URL once: the stream's form, thoughts, call ids. */
export interface AnswerShape {
  /** `alt=sse`: server-sent events; else one JSON array. */
  readonly sse: boolean;
  /** `includeThoughts`: thought parts are shown (Gemini shows none otherwise). */
  readonly thoughts: boolean;
  /** The client's own function calls carry ids: answers' calls carry theirs too (Gemini's often carry none). */
  readonly ids: boolean;
}

/** Where a stream goes on from, when a renderer takes over one the client had from a relay. */
export interface RelayedSoFar {
  responseId?: string;
  modelVersion?: string;
  /** Chunks went out already (an array form is open). */
  opened: boolean;
}

/**
 * Stream parts as Gemini's `GenerateContentResponse` chunks, as its server writes them (field
 * order included): `{"candidates":[{"content":{"parts":[…],"role":"model"},"index":0}],
 * "modelVersion","responseId"}`. Text is a `text` part, reasoning a `thought` part (when asked
 * for), each tool call one `functionCall` part with its arguments whole once they are complete;
 * the last chunk carries the `finishReason` (a turn that ended in calls is `STOP`, as Gemini's
 * are) and the `usageMetadata`. Nothing is written before the first content.
 */
export class GeminiRenderer implements StreamRenderer {
  private readonly frames: GeminiFrames;
  private finish: FinishReason = 'stop';
  private usage: Usage | undefined;
  private readonly calls = new WholeCalls();
  private tail = '';
  private readonly pieces: string[] = [];

  constructor(
    private model: string,
    private readonly shape: AnswerShape,
    private responseId = newId(''),
  ) {
    this.frames = shape.sse ? new SseFrames() : new ArrayFrames();
    this.setTail();
  }

  render(parts: readonly StreamPart[]): string {
    const pieces = this.pieces;
    pieces.length = 0;
    for (const part of parts) {
      switch (part.type) {
        case 'text-delta':
          if (part.delta !== '') pieces.push(`{"text":${JSON.stringify(part.delta)}}`);
          break;
        case 'reasoning-delta':
          if (part.delta !== '' && this.shape.thoughts) pieces.push(`{"text":${JSON.stringify(part.delta)},"thought":true}`);
          break;
        case 'tool-input-start':
        case 'tool-input-delta':
        case 'tool-input-end': {
          const call = this.calls.take(part);
          if (call) pieces.push(this.functionCall(call.id, call.name, call.args));
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
    return pieces.length === 0 ? '' : this.frames.chunk(`{"candidates":[{"content":{"parts":[${pieces.join(',')}],"role":"model"},"index":0}]${this.tail}`);
  }

  /** Goes on with a stream the client already has from a relayed upstream: its response id and model version, its array open. */
  continueAs(sofar: RelayedSoFar): void {
    if (sofar.responseId !== undefined) this.responseId = sofar.responseId;
    if (sofar.modelVersion !== undefined) this.model = sofar.modelVersion;
    if (sofar.opened) this.frames.continueOpened();
    this.setTail();
  }

  end(): string {
    // A stream that broke inside a call's arguments never completes it: what is there is sent.
    const parts = this.calls.drain().map((call) => this.functionCall(call.id, call.name, call.args));
    if (parts.length === 0) parts.push('{"text":""}');
    const usage = this.usage ? `,"usageMetadata":${JSON.stringify(usageMetadata(this.usage))}` : '';
    const last = `{"candidates":[{"content":{"parts":[${parts.join(',')}],"role":"model"},"finishReason":"${geminiFinish(this.finish)}","index":0}]${usage}${this.tail}`;
    return this.frames.chunk(last) + this.frames.end();
  }

  error(message: string): string {
    return this.frames.error(streamErrorJson(message));
  }

  private functionCall(id: string, name: string, args: string): string {
    const call = this.shape.ids ? { name, args: parseArguments(args), id } : { name, args: parseArguments(args) };
    return JSON.stringify({ functionCall: call });
  }

  private setTail(): void {
    this.tail = `,"modelVersion":${JSON.stringify(this.model)},"responseId":${JSON.stringify(this.responseId)}}`;
  }
}

/** A whole neutral answer as one `GenerateContentResponse` (`:generateContent`). */
export function renderGeminiResponse(response: NeutralResponse, model: string, shape: AnswerShape): string {
  const parts: Record<string, unknown>[] = [];
  for (const part of response.content) {
    if (part.type === 'reasoning') {
      if (shape.thoughts && part.text !== '') parts.push({ text: part.text, thought: true });
    } else if (part.type === 'text') {
      if (part.text !== '') parts.push({ text: part.text });
    } else {
      const args = parseArguments(part.arguments);
      parts.push({ functionCall: shape.ids ? { name: part.name, args, id: part.id } : { name: part.name, args } });
    }
  }
  if (parts.length === 0) parts.push({ text: '' });
  const answer: Record<string, unknown> = {
    candidates: [{ content: { parts, role: 'model' }, finishReason: geminiFinish(response.finishReason), index: 0 }],
  };
  if (response.usage) answer.usageMetadata = usageMetadata(response.usage);
  answer.modelVersion = model;
  answer.responseId = response.id ?? newId('');
  return JSON.stringify(answer);
}

/** The stream's error chunk for a client that asked this form (a stream that cannot go on). */
export function geminiStreamError(sse: boolean, message: string): string {
  return (sse ? new SseFrames() : new ArrayFrames()).error(streamErrorJson(message));
}
