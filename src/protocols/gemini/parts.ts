import { isRecord } from '../../util/is-record.js';
import type { FinishReason } from '../core/neutral.js';
import { neutralFinish } from './usage.js';

/**
 * What one part of a Gemini answer is (`candidates[0].content.parts[i]`), read alike in a
 * stream and in a whole answer: text, thought text (`thought: true`), a whole function call
 * (its `args` an object, sent as JSON text), or content of Gemini's own kind no other protocol
 * carries (code it ran, an image it made). A `thoughtSignature` is Gemini's alone: it is not
 * read, so it reaches no tier of another type; a Gemini client gets it only through a relay.
 */
export type GeminiPart =
  | { kind: 'text'; text: string }
  | { kind: 'thought'; text: string }
  | { kind: 'call'; name: string; arguments: string; id: string | undefined }
  | { kind: 'other' };

/** One part in the neutral words; null for a part that carries nothing (an empty text, a signature alone). */
export function readGeminiPart(part: unknown): GeminiPart | null {
  if (!isRecord(part)) return null;
  if (typeof part.text === 'string') {
    if (part.text === '') return null;
    return part.thought === true ? { kind: 'thought', text: part.text } : { kind: 'text', text: part.text };
  }
  const call = part.functionCall;
  if (isRecord(call)) {
    const id = typeof call.id === 'string' && call.id !== '' ? call.id : undefined;
    return { kind: 'call', name: typeof call.name === 'string' ? call.name : '', arguments: JSON.stringify(isRecord(call.args) ? call.args : {}), id };
  }
  if (part.executableCode !== undefined || part.codeExecutionResult !== undefined || part.inlineData !== undefined || part.fileData !== undefined) {
    return { kind: 'other' };
  }
  return null;
}

/** The first candidate of an answer or chunk (the only one a translation carries), or undefined. */
export function firstCandidate(answer: Record<string, unknown>): Record<string, unknown> | undefined {
  const candidates = answer.candidates;
  return Array.isArray(candidates) && isRecord(candidates[0]) ? candidates[0] : undefined;
}

/** A candidate's parts (none when it has no content: a filtered one). */
export function partsOf(candidate: Record<string, unknown> | undefined): readonly unknown[] {
  const content = candidate?.content;
  return isRecord(content) && Array.isArray(content.parts) ? content.parts : [];
}

/**
 * How an answer (or chunk) says it ended: its candidate's `finishReason`, or a prompt Gemini
 * blocked (`promptFeedback.blockReason`, and no candidate at all): a content filter's doing.
 */
export function answerFinish(answer: Record<string, unknown>, candidate: Record<string, unknown> | undefined): FinishReason | undefined {
  const finish = neutralFinish(candidate?.finishReason);
  if (finish !== undefined) return finish;
  const feedback = answer.promptFeedback;
  return isRecord(feedback) && typeof feedback.blockReason === 'string' && feedback.blockReason !== 'BLOCK_REASON_UNSPECIFIED' ? 'content_filter' : undefined;
}

/**
 * A tool call's id: Gemini's own when it gave one, else made from the answer's `responseId` and
 * the call's place in the answer: the same answer read twice has the same ids, and two answers
 * of one conversation do not share one (Anthropic refuses a history with two equal ids).
 */
export function callId(given: string | undefined, responseId: unknown, index: number): string {
  if (given !== undefined) return given;
  const stem = typeof responseId === 'string' ? responseId.replace(/[^A-Za-z0-9_-]/g, '').slice(0, 40) : '';
  return stem === '' ? `call_${index}` : `call_${stem}_${index}`;
}
