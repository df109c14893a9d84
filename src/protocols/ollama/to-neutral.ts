import { isRecord } from '../../util/is-record.js';
import { assignNumbers, numberField, stringField, stringList } from '../core/fields.js';
import type { AssistantPart, NeutralMessage, NeutralPart, NeutralRequest, NeutralTool } from '../core/neutral.js';
import type { Unsupported } from '../core/types.js';

/** An Ollama /api/chat body as a neutral request (for a tier that speaks another protocol). */
export function ollamaChatToNeutral(body: Record<string, unknown>): NeutralRequest | Unsupported {
  const request = controls(body);
  // Ollama's tool calls may come without ids, and its tool results name the tool, not the call:
  // each result answers the oldest call of its tool still unanswered (ids made up in order).
  const unanswered: Array<{ id: string; name: string }> = [];
  let calls = 0;
  for (const message of Array.isArray(body.messages) ? body.messages : []) {
    if (!isRecord(message)) continue;
    const text = typeof message.content === 'string' ? message.content : '';
    if (message.role === 'system') {
      if (text !== '') request.system.push(text);
    } else if (message.role === 'user') {
      request.messages.push({ role: 'user', content: withImages(text, message.images) });
    } else if (message.role === 'assistant') {
      const content: AssistantPart[] = [];
      const thinking = stringField(message.thinking);
      if (thinking) content.push({ type: 'reasoning', text: thinking });
      if (text !== '') content.push({ type: 'text', text });
      for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
        const fn = isRecord(call) && isRecord(call.function) ? call.function : undefined;
        if (!fn) continue;
        const id = (isRecord(call) ? stringField(call.id) : undefined) || `call_${calls}`;
        calls++;
        const name = stringField(fn.name) ?? '';
        unanswered.push({ id, name });
        content.push({ type: 'tool_call', id, name, arguments: typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {}) });
      }
      request.messages.push({ role: 'assistant', content });
    } else if (message.role === 'tool') {
      const named = stringField(message.tool_name) ?? stringField(message.name);
      const byId = stringField(message.tool_call_id);
      const at = unanswered.findIndex((call) => (byId !== undefined ? call.id === byId : named === undefined || call.name === named));
      const answered = at === -1 ? undefined : unanswered.splice(at, 1)[0];
      const result: NeutralMessage = { role: 'tool', toolCallId: byId ?? answered?.id ?? named ?? '', content: withImages(text, message.images) };
      const name = named ?? answered?.name;
      if (name) result.name = name;
      request.messages.push(result);
    }
  }
  request.tools = functionTools(body.tools);
  return request;
}

/** An Ollama /api/generate body as a neutral request: its system prompt, and its prompt (with images) as the one user message. */
export function ollamaGenerateToNeutral(body: Record<string, unknown>): NeutralRequest | Unsupported {
  if (typeof body.suffix === 'string' && body.suffix !== '') return { unsupported: 'a "suffix" (fill in the middle) needs a tier that serves Ollama itself' };
  const request = controls(body);
  if (typeof body.system === 'string' && body.system !== '') request.system.push(body.system);
  request.messages.push({ role: 'user', content: withImages(typeof body.prompt === 'string' ? body.prompt : '', body.images) });
  return request;
}

/** Ollama's function tools (its only kind), as Chat Completions writes them. */
export function functionTools(value: unknown): NeutralTool[] {
  if (!Array.isArray(value)) return [];
  const out: NeutralTool[] = [];
  for (const tool of value) {
    const fn = isRecord(tool) && isRecord(tool.function) ? tool.function : undefined;
    const name = fn ? stringField(fn.name) : undefined;
    if (!fn || !name) continue;
    const neutral: NeutralTool = { name, parameters: isRecord(fn.parameters) ? fn.parameters : { type: 'object', properties: {} } };
    const description = stringField(fn.description);
    if (description) neutral.description = description;
    out.push(neutral);
  }
  return out;
}

/** The effort Ollama's `think` asks for: its levels as they are, true a medium effort, false none. */
export function effortOfThink(think: unknown): string | undefined {
  if (think === true) return 'medium';
  if (think === false) return 'none';
  return typeof think === 'string' && think !== '' ? think : undefined;
}

/**
 * The request's controls, common to chat and generate: `format` (structured output), `think`,
 * and the `options` a translation can carry. `num_ctx` and `keep_alive` are the Ollama
 * server's own: a relay keeps them, a translation has nowhere to put them.
 */
function controls(body: Record<string, unknown>): NeutralRequest {
  const request: NeutralRequest = { system: [], messages: [], tools: [] };
  if (body.format === 'json') request.responseFormat = { type: 'json_object' };
  else if (isRecord(body.format)) request.responseFormat = { type: 'json_schema', name: 'response', schema: body.format };
  const effort = effortOfThink(body.think);
  if (effort) request.reasoningEffort = effort;
  const options = isRecord(body.options) ? body.options : {};
  assignNumbers(request, {
    temperature: options.temperature,
    topP: options.top_p,
    topK: options.top_k,
    seed: options.seed,
    frequencyPenalty: options.frequency_penalty,
    presencePenalty: options.presence_penalty,
  });
  // -1 (no limit) and -2 (fill the context) are Ollama's own: no cap then.
  const predict = ollamaMaxTokens(options);
  if (predict !== undefined) request.maxTokens = predict;
  const stop = stringList(options.stop);
  if (stop) request.stop = stop;
  return request;
}

/** Text, then the message's images (base64 without a media type: told from the data's first bytes). */
function withImages(text: string, images: unknown): NeutralPart[] {
  const parts: NeutralPart[] = text === '' ? [] : [{ type: 'text', text }];
  if (Array.isArray(images)) {
    for (const data of images)
      if (typeof data === 'string' && data !== '') parts.push({ type: 'image', source: { kind: 'base64', mediaType: mediaTypeOf(data), data } });
  }
  return parts.length > 0 ? parts : [{ type: 'text', text }];
}

/** PNG, JPEG, GIF and WebP as their base64 starts; PNG when none matches. */
const SIGNATURES: Array<[string, string]> = [
  ['iVBORw0KGgo', 'image/png'],
  ['/9j/', 'image/jpeg'],
  ['R0lGOD', 'image/gif'],
  ['UklGR', 'image/webp'],
];

function mediaTypeOf(data: string): string {
  for (const [start, type] of SIGNATURES) if (data.startsWith(start)) return type;
  return 'image/png';
}

/** The answer's cap `options.num_predict` sets; -1 (no limit) and -2 (fill the context) are Ollama's own: no cap then. */
export function ollamaMaxTokens(options: Record<string, unknown>): number | undefined {
  const predict = numberField(options.num_predict);
  return predict !== undefined && predict > 0 ? predict : undefined;
}
