import { bodyObject, scannedUsage } from '../core/json.js';
import { type AssistantPart, type NeutralResponse, wholeResponse } from '../core/neutral.js';
import { mergeUsage, type Usage } from '../core/usage.js';
import { answerFinish, callId, firstCandidate, partsOf, readGeminiPart } from './parts.js';
import { geminiUsage } from './usage.js';

/**
 * A whole `generateContent` answer as a neutral response: its first candidate's parts (runs of
 * text and of thought text joined; calls with their ids), its finish, `responseId`,
 * `modelVersion` and `usageMetadata`; 'not_json' when the body is not an answer.
 */
export function decodeGeminiResponse(body: Buffer): NeutralResponse | 'not_json' {
  const answer = bodyObject(body);
  if (answer === null || (!Array.isArray(answer.candidates) && answer.promptFeedback === undefined)) return 'not_json';
  const candidate = firstCandidate(answer);
  const content: AssistantPart[] = [];
  let calls = 0;
  for (const raw of partsOf(candidate)) {
    const part = readGeminiPart(raw);
    if (part === null || part.kind === 'other') continue;
    const last = content.at(-1);
    if (part.kind === 'call') {
      content.push({ type: 'tool_call', id: callId(part.id, answer.responseId, calls++), name: part.name, arguments: part.arguments });
    } else if (part.kind === 'text') {
      if (last?.type === 'text') last.text += part.text;
      else content.push({ type: 'text', text: part.text });
    } else if (last?.type === 'reasoning') last.text += part.text;
    else content.push({ type: 'reasoning', text: part.text });
  }
  const usage = geminiUsage(answer.usageMetadata);
  return wholeResponse(content, answerFinish(answer, candidate) ?? 'stop', {
    id: answer.responseId,
    model: answer.modelVersion,
    usage: usage ? mergeUsage(undefined, usage) : undefined,
  });
}

const USAGE_METADATA = Buffer.from('"usageMetadata"');

/** A whole answer's usage, its `usageMetadata` found without parsing the answer (a relayed one goes out as it came). */
export function readGeminiUsage(body: Buffer): Usage | undefined | 'not_json' {
  return scannedUsage(
    body,
    (value) => {
      const usage = geminiUsage(value);
      return usage ? mergeUsage(undefined, usage) : undefined;
    },
    USAGE_METADATA,
  );
}
