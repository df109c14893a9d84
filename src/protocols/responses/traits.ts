import { isRecord } from '../../util/is-record.js';
import { holdsPartOf, type Recognition } from '../core/conversation.js';
import { type NeutralTool, NO_REASONING_EFFORTS } from '../core/neutral.js';
import { toolList } from './to-neutral.js';

/** `reasoning.effort` other than none / minimal. */
export function responsesAsksThinking(body: Record<string, unknown>): boolean {
  const effort = isRecord(body.reasoning) ? body.reasoning.effort : undefined;
  return typeof effort === 'string' && !NO_REASONING_EFFORTS.has(effort);
}

const IMAGE = new Set(['input_image']);

/** An `input_image` in any input item, a tool output's included. */
export function responsesHasImages(body: Record<string, unknown>): boolean {
  return holdsPartOf(body.input, IMAGE);
}

/** The function tools offered, namespaced ones included (hosted kinds are not tools a model writes calls to as text). */
export function responsesTools(body: Record<string, unknown>): NeutralTool[] {
  return toolList(body.tools).tools;
}

/** `input` (a string or items) and no `messages`: only Responses writes that. */
export function recognizeResponses(body: Record<string, unknown>): Recognition {
  if (Array.isArray(body.messages)) return null;
  return typeof body.input === 'string' || Array.isArray(body.input) ? 'own' : null;
}
