import { isRecord } from '../../util/is-record.js';
import { stringField } from '../core/fields.js';
import type { AssistantPart, NeutralMessage, NeutralPart, NeutralRequest } from '../core/neutral.js';
import type { Unsupported } from '../core/types.js';
import { CallPairing } from './call-ids.js';
import { applyGeneration } from './generation.js';
import { generationOf } from './schema.js';
import { geminiToolChoice, geminiTools } from './tools.js';

/**
 * A Gemini body as a neutral request, for a tier that speaks another protocol: `contents` (roles
 * `user` and `model`) as messages, `systemInstruction` as the system prompt, function declarations
 * as tools, generationConfig's controls. Gemini's `thoughtSignature`s are Google's own and go to
 * no other tier. A `cachedContent` names a prompt Google keeps: only a gemini tier has it.
 */
export function geminiToNeutral(sent: Record<string, unknown>): NeutralRequest | Unsupported {
  const body = generationOf(sent);
  if (typeof body.cachedContent === 'string' && body.cachedContent !== '') {
    return { unsupported: 'a "cachedContent" is a prompt Google keeps: only a gemini tier can carry it' };
  }
  const request: NeutralRequest = { system: systemTexts(body.systemInstruction), messages: [], tools: geminiTools(body) };
  const choice = geminiToolChoice(body);
  if (choice) request.toolChoice = choice;
  applyGeneration(body, request);
  const problem = addContents(body.contents, request.messages);
  return problem ?? request;
}

function systemTexts(instruction: unknown): string[] {
  if (typeof instruction === 'string') return instruction === '' ? [] : [instruction];
  if (!isRecord(instruction) || !Array.isArray(instruction.parts)) return [];
  const texts: string[] = [];
  for (const part of instruction.parts) if (isRecord(part) && typeof part.text === 'string' && part.text !== '') texts.push(part.text);
  return texts;
}

/** The contents as messages, function calls and responses paired (call-ids.ts). */
function addContents(contents: unknown, messages: NeutralMessage[]): Unsupported | undefined {
  if (!Array.isArray(contents)) return undefined;
  const pairing = new CallPairing();
  for (const content of contents) {
    if (!isRecord(content) || !Array.isArray(content.parts)) continue;
    if (content.role === 'model') {
      const parts: AssistantPart[] = [];
      for (const part of content.parts) {
        if (!isRecord(part)) continue;
        if (typeof part.text === 'string' && part.text !== '')
          parts.push(part.thought === true ? { type: 'reasoning', text: part.text } : { type: 'text', text: part.text });
        const call = isRecord(part.functionCall) ? part.functionCall : undefined;
        if (!call) continue;
        const name = stringField(call.name) ?? '';
        const id = pairing.call(stringField(call.id), name);
        parts.push({ type: 'tool_call', id, name, arguments: JSON.stringify(isRecord(call.args) ? call.args : {}) });
      }
      if (parts.length > 0) messages.push({ role: 'assistant', content: parts });
      continue;
    }
    // user (or no role; the old API's `function` role held responses too)
    let user: NeutralPart[] = [];
    for (const part of content.parts) {
      if (!isRecord(part) || part.thought === true) continue;
      if (isRecord(part.functionResponse)) {
        if (user.length > 0) messages.push({ role: 'user', content: user });
        user = [];
        messages.push(toolResult(part.functionResponse, pairing));
        continue;
      }
      const piece = userPart(part);
      if (piece === null) continue;
      if ('unsupported' in piece) return piece;
      user.push(piece);
    }
    if (user.length > 0) messages.push({ role: 'user', content: user });
  }
  return undefined;
}

function toolResult(response: Record<string, unknown>, pairing: CallPairing): NeutralMessage {
  const name = stringField(response.name);
  const id = pairing.answer(stringField(response.id), name);
  const content: NeutralPart[] = [{ type: 'text', text: resultText(response.response) }];
  // A function response may carry media of its own (images it read).
  if (Array.isArray(response.parts)) for (const part of response.parts) if (isRecord(part)) content.push(...imageOf(part));
  const result: NeutralMessage = { role: 'tool', toolCallId: id ?? name ?? '', content };
  if (name) result.name = name;
  return result;
}

/**
 * A function's response as the text a model reads: the one string it holds when it is only that
 * (`{"output": "…"}`, as Gemini CLI sends, or `{"content": "…"}`), else its JSON.
 */
function resultText(response: unknown): string {
  if (typeof response === 'string') return response;
  if (!isRecord(response)) return JSON.stringify(response ?? {});
  const keys = Object.keys(response);
  if (keys.length === 1 && (keys[0] === 'output' || keys[0] === 'content') && typeof response[keys[0]] === 'string') return response[keys[0]] as string;
  return JSON.stringify(response);
}

/** A user part as neutral content: text, an image inline or by URL; null for a part with nothing to carry; Unsupported for media no other tier takes. */
function userPart(part: Record<string, unknown>): NeutralPart | Unsupported | null {
  if (typeof part.text === 'string') return part.text === '' ? null : { type: 'text', text: part.text };
  const images = imageOf(part);
  if (images.length > 0) return images[0];
  const media = isRecord(part.inlineData) ? part.inlineData : isRecord(part.fileData) ? part.fileData : undefined;
  if (media) return { unsupported: `a ${stringField(media.mimeType) ?? 'file'} part (inlineData or fileData) needs a gemini tier` };
  return null;
}

function imageOf(part: Record<string, unknown>): NeutralPart[] {
  const inline = isRecord(part.inlineData) ? part.inlineData : undefined;
  if (inline && isImage(inline.mimeType) && typeof inline.data === 'string') {
    return [{ type: 'image', source: { kind: 'base64', mediaType: inline.mimeType as string, data: inline.data } }];
  }
  const file = isRecord(part.fileData) ? part.fileData : undefined;
  if (file && isImage(file.mimeType) && typeof file.fileUri === 'string' && /^https?:\/\//.test(file.fileUri)) {
    return [{ type: 'image', source: { kind: 'url', url: file.fileUri } }];
  }
  return [];
}

function isImage(mimeType: unknown): boolean {
  return typeof mimeType === 'string' && mimeType.startsWith('image/');
}
