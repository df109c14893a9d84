import { isRecord } from '../../util/is-record.js';
import { imageFromUrl } from '../translate/images.js';
import type { AssistantPart, NeutralMessage, NeutralPart, NeutralRequest, NeutralTool, NeutralToolChoice, ResponseFormat } from '../core/neutral.js';
import type { Unsupported } from '../core/types.js';
import { numberField, stringField, stringList, textOf } from '../core/fields.js';

/** A Chat Completions body as a neutral request (for a tier that speaks another protocol). */
export function chatToNeutral(body: Record<string, unknown>): NeutralRequest | Unsupported {
  const request: NeutralRequest = { system: [], messages: [], tools: [] };
  const toolNames = new Map<string, string>();
  for (const message of body.messages as unknown[]) {
    if (!isRecord(message)) continue;
    const role = message.role;
    if (role === 'system' || role === 'developer') {
      const text = textOf(message.content);
      if (text !== '') request.system.push(text);
    } else if (role === 'user') {
      const content = userParts(message.content);
      if ('unsupported' in content) return content;
      request.messages.push({ role: 'user', content });
    } else if (role === 'assistant') {
      request.messages.push({ role: 'assistant', content: assistantParts(message, toolNames) });
    } else if (role === 'tool' || role === 'function') {
      const id = stringField(message.tool_call_id) ?? stringField(message.name) ?? '';
      const content = userParts(message.content);
      if ('unsupported' in content) return content;
      const tool: NeutralMessage = { role: 'tool', toolCallId: id, content };
      const name = toolNames.get(id) ?? stringField(message.name);
      if (name) tool.name = name;
      request.messages.push(tool);
    }
  }
  request.tools = tools(body.tools);
  const choice = toolChoice(body.tool_choice);
  if (choice) request.toolChoice = choice;
  if (typeof body.parallel_tool_calls === 'boolean') request.parallelToolCalls = body.parallel_tool_calls;
  const maxTokens = chatMaxTokens(body);
  if (maxTokens !== undefined) request.maxTokens = maxTokens;
  copyNumber(body.temperature, (v) => (request.temperature = v));
  copyNumber(body.top_p, (v) => (request.topP = v));
  copyNumber(body.seed, (v) => (request.seed = v));
  copyNumber(body.frequency_penalty, (v) => (request.frequencyPenalty = v));
  copyNumber(body.presence_penalty, (v) => (request.presencePenalty = v));
  copyNumber(body.n, (v) => (request.choices = v));
  const stop = stringList(body.stop);
  if (stop) request.stop = stop;
  const format = responseFormat(body.response_format);
  if (format) request.responseFormat = format;
  const effort = stringField(body.reasoning_effort);
  if (effort) request.reasoningEffort = effort;
  const user = stringField(body.user);
  if (user) request.user = user;
  return request;
}

function copyNumber(value: unknown, set: (value: number) => void): void {
  const n = numberField(value);
  if (n !== undefined) set(n);
}

function userParts(content: unknown): NeutralPart[] | Unsupported {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  const parts: NeutralPart[] = [];
  for (const part of content) {
    if (!isRecord(part)) continue;
    if (part.type === 'text' && typeof part.text === 'string') parts.push({ type: 'text', text: part.text });
    else if (part.type === 'image_url') {
      const image = part.image_url;
      const url = typeof image === 'string' ? image : isRecord(image) ? stringField(image.url) : undefined;
      if (url) parts.push({ type: 'image', source: imageFromUrl(url) });
    } else if (typeof part.type === 'string') {
      return { unsupported: `a "${part.type}" content part cannot be translated for this tier` };
    }
  }
  return parts;
}

function assistantParts(message: Record<string, unknown>, toolNames: Map<string, string>): AssistantPart[] {
  const parts: AssistantPart[] = [];
  const reasoning = stringField(message.reasoning_content) ?? stringField(message.reasoning);
  if (reasoning) parts.push({ type: 'reasoning', text: reasoning });
  const text = textOf(message.content);
  if (text !== '') parts.push({ type: 'text', text });
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      if (!isRecord(call) || !isRecord(call.function)) continue;
      const id = stringField(call.id) ?? '';
      const name = stringField(call.function.name) ?? '';
      toolNames.set(id, name);
      parts.push({ type: 'tool_call', id, name, arguments: argumentsText(call.function.arguments) });
    }
  } else if (isRecord(message.function_call)) {
    const name = stringField(message.function_call.name) ?? '';
    toolNames.set(name, name);
    parts.push({ type: 'tool_call', id: name, name, arguments: argumentsText(message.function_call.arguments) });
  }
  return parts;
}

function argumentsText(value: unknown): string {
  if (typeof value === 'string') return value;
  return value === undefined ? '{}' : JSON.stringify(value);
}

export function tools(value: unknown): NeutralTool[] {
  if (!Array.isArray(value)) return [];
  const out: NeutralTool[] = [];
  for (const tool of value) {
    if (!isRecord(tool) || !isRecord(tool.function)) continue;
    const fn = tool.function;
    const name = stringField(fn.name);
    if (!name) continue;
    const neutral: NeutralTool = { name, parameters: isRecord(fn.parameters) ? fn.parameters : { type: 'object', properties: {} } };
    const description = stringField(fn.description);
    if (description) neutral.description = description;
    if (typeof fn.strict === 'boolean') neutral.strict = fn.strict;
    out.push(neutral);
  }
  return out;
}

function toolChoice(value: unknown): NeutralToolChoice | undefined {
  if (value === 'auto' || value === 'none' || value === 'required') return value;
  if (isRecord(value) && isRecord(value.function) && typeof value.function.name === 'string') return { name: value.function.name };
  return undefined;
}

function responseFormat(value: unknown): ResponseFormat | undefined {
  if (!isRecord(value)) return undefined;
  if (value.type === 'json_object') return { type: 'json_object' };
  if (value.type === 'json_schema' && isRecord(value.json_schema)) {
    const schema = value.json_schema;
    const format: ResponseFormat = { type: 'json_schema', name: stringField(schema.name) ?? 'response', schema: isRecord(schema.schema) ? schema.schema : {} };
    if (typeof schema.strict === 'boolean') format.strict = schema.strict;
    return format;
  }
  return undefined;
}

/** The answer's cap the body sets (max_completion_tokens, else the older max_tokens). */
export function chatMaxTokens(body: Record<string, unknown>): number | undefined {
  return numberField(body.max_completion_tokens) ?? numberField(body.max_tokens);
}
