import { isRecord } from '../../util/is-record.js';
import type { ConversationBuilder, ConversationEntry, Recognition } from '../core/conversation.js';
import { stringField } from '../core/fields.js';
import { CallPairing } from './call-ids.js';
import { generationOf } from './schema.js';

/** An image anywhere in the contents, a function's response included: an inline or linked part whose type is an image's. */
export function geminiHasImages(sent: Record<string, unknown>): boolean {
  const contents = generationOf(sent).contents;
  if (!Array.isArray(contents)) return false;
  for (const content of contents) {
    if (!isRecord(content) || !Array.isArray(content.parts)) continue;
    for (const part of content.parts) {
      if (!isRecord(part)) continue;
      if (isImagePart(part)) return true;
      const response = isRecord(part.functionResponse) ? part.functionResponse : undefined;
      if (response && Array.isArray(response.parts) && response.parts.some((inner) => isRecord(inner) && isImagePart(inner))) return true;
    }
  }
  return false;
}

function isImagePart(part: Record<string, unknown>): boolean {
  const media = isRecord(part.inlineData) ? part.inlineData : isRecord(part.fileData) ? part.fileData : undefined;
  return media !== undefined && typeof media.mimeType === 'string' && media.mimeType.startsWith('image/');
}

/** `contents` is Gemini's own word: no other protocol llm-route speaks names a conversation so. */
export function recognizeGemini(body: Record<string, unknown>): Recognition {
  return Array.isArray(body.contents) ? 'own' : null;
}

/**
 * Gemini's conversation: `systemInstruction` (parts of text), and `contents` whose parts carry no
 * type — text (a `thought` is the model's, never rewritten), `functionCall` (its arguments count
 * but never change) answered by a `functionResponse` in a later user content, whose response's
 * `output` (as Gemini CLI sends) is the tool result's text. A user content that answers calls is
 * a tool message.
 */
export function describeGeminiConversation(body: Record<string, unknown>, view: ConversationBuilder): boolean {
  const contents = body.contents;
  if (!Array.isArray(contents)) return false;
  describeSystem(body, view);
  const pairing = new CallPairing();
  contents.forEach((raw, index) => {
    const path = `contents[${index}]`;
    if (!isRecord(raw) || !Array.isArray(raw.parts)) {
      view.addMessage('other', path, raw, contents);
      return;
    }
    const parts = raw.parts;
    const answers = raw.role !== 'model' && parts.some((part) => isRecord(part) && isRecord(part.functionResponse));
    const message = view.addMessage(raw.role === 'model' ? 'assistant' : answers ? 'tool' : 'user', path, raw, contents);
    parts.forEach((part, at) => {
      if (isRecord(part)) describePart(view, message, parts, at, `${path}.parts[${at}]`, pairing);
    });
  });
  return true;
}

function describeSystem(body: Record<string, unknown>, view: ConversationBuilder): void {
  const instruction = body.systemInstruction;
  if (typeof instruction === 'string') {
    const system = view.addMessage('system', 'systemInstruction', undefined, undefined);
    view.addContent(system, body, 'systemInstruction', '', { whenEmpty: () => delete body.systemInstruction });
  } else if (isRecord(instruction) && Array.isArray(instruction.parts)) {
    const system = view.addMessage('system', 'systemInstruction', undefined, undefined);
    const parts = instruction.parts;
    parts.forEach((_part, at) => {
      view.addContentItem(system, parts, at, `systemInstruction.parts[${at}]`, { whenEmpty: () => delete body.systemInstruction });
    });
  }
}

function describePart(view: ConversationBuilder, message: ConversationEntry, parts: unknown[], at: number, path: string, pairing: CallPairing): void {
  const part = parts[at] as Record<string, unknown>;
  const call = isRecord(part.functionCall) ? part.functionCall : undefined;
  if (call) {
    message.calls.push(pairing.call(stringField(call.id), stringField(call.name) ?? ''));
    message.fixedTexts.push(JSON.stringify(call.args ?? {}));
    return;
  }
  const response = isRecord(part.functionResponse) ? part.functionResponse : undefined;
  if (response) {
    const id = pairing.answer(stringField(response.id), stringField(response.name));
    if (id === undefined) return;
    message.answers.push(id);
    const result = response.response;
    if (isRecord(result) && typeof result.output === 'string') {
      view.addContent(message, result, 'output', `${path}.functionResponse.response`, { toolResult: id, whenEmpty: () => {} });
    } else message.fixedTexts.push(JSON.stringify(result ?? {}));
    return;
  }
  if (part.thought !== true) view.addContentItem(message, parts, at, path, {});
}
