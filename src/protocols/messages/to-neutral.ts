import { isRecord } from '../../util/is-record.js';
import { numberField, stringField, stringList } from '../core/fields.js';
import type {
  AssistantPart,
  ImageSource,
  NeutralMessage,
  NeutralPart,
  NeutralRequest,
  NeutralTool,
  NeutralToolChoice,
  ResponseFormat,
} from '../core/neutral.js';
import { effortOfBudget } from '../translate/reasoning.js';
import { withoutBillingLine } from './billing-line.js';
import type { Unsupported } from '../core/types.js';

/** An Anthropic Messages body as a neutral request (for a tier that speaks another protocol). */
export function messagesToNeutral(body: Record<string, unknown>): NeutralRequest | Unsupported {
  // Claude Code's billing line changes every request: a prompt that starts with it is never found in a server's cache.
  const request: NeutralRequest = { system: systemTexts(withoutBillingLine(body.system)), messages: [], tools: [] };
  const toolNames = new Map<string, string>();
  for (const message of body.messages as unknown[]) {
    if (!isRecord(message)) continue;
    if (message.role === 'assistant') {
      request.messages.push({ role: 'assistant', content: assistantParts(message.content, toolNames) });
      continue;
    }
    if (message.role === 'system') {
      // A system turn mid-conversation (Claude Code sends them): with the other instructions.
      request.system.push(...systemTexts(message.content));
      continue;
    }
    const converted = userMessages(message.content, toolNames);
    if ('unsupported' in converted) return converted;
    request.messages.push(...converted);
  }
  const tools = toolList(body.tools);
  if ('unsupported' in tools) return tools;
  request.tools = tools.tools;
  if (tools.hosted.length > 0) request.hostedTools = tools.hosted;
  const choice = toolChoice(body.tool_choice);
  if (choice.choice) request.toolChoice = choice.choice;
  if (choice.parallel === false) request.parallelToolCalls = false;
  const maxTokens = messagesMaxTokens(body);
  if (maxTokens !== undefined) request.maxTokens = maxTokens;
  const temperature = numberField(body.temperature);
  if (temperature !== undefined) request.temperature = temperature;
  const topP = numberField(body.top_p);
  if (topP !== undefined) request.topP = topP;
  const topK = numberField(body.top_k);
  if (topK !== undefined) request.topK = topK;
  const stop = stringList(body.stop_sequences);
  if (stop) request.stop = stop;
  // metadata.user_id is not carried: Claude Code's is a 150-character JSON string with its
  // device and session ids, more than other vendors' `user` takes (OpenRouter: 128) and
  // nothing another vendor should be handed.
  if (isRecord(body.thinking) && body.thinking.type === 'enabled') {
    const budget = numberField(body.thinking.budget_tokens);
    if (budget !== undefined) request.reasoningEffort = effortOfBudget(budget);
  }
  const format = messagesOutputFormat(body);
  if (format) request.responseFormat = format;
  return request;
}

/** Anthropic's structured output (`output_config.format`, or the beta's `output_format`) as a response format. */
function messagesOutputFormat(body: Record<string, unknown>): ResponseFormat | undefined {
  const format = isRecord(body.output_config) && isRecord(body.output_config.format) ? body.output_config.format : body.output_format;
  if (!isRecord(format) || format.type !== 'json_schema' || !isRecord(format.schema)) return undefined;
  return { type: 'json_schema', name: 'response', schema: format.schema };
}

function systemTexts(system: unknown): string[] {
  if (typeof system === 'string') return system === '' ? [] : [system];
  if (!Array.isArray(system)) return [];
  return system.flatMap((block) => (isRecord(block) && typeof block.text === 'string' && block.text !== '' ? [block.text] : []));
}

/**
 * A user turn: its tool results become tool messages (first, as Anthropic puts them), the
 * rest one user message.
 */
function userMessages(content: unknown, toolNames: Map<string, string>): NeutralMessage[] | Unsupported {
  if (typeof content === 'string') return [{ role: 'user', content: [{ type: 'text', text: content }] }];
  if (!Array.isArray(content)) return [];
  const tools: NeutralMessage[] = [];
  const parts: NeutralPart[] = [];
  for (const block of content) {
    if (!isRecord(block)) continue;
    if (block.type === 'tool_result') {
      const id = stringField(block.tool_use_id) ?? '';
      const result = resultParts(block.content);
      if ('unsupported' in result) return result;
      const message: NeutralMessage = { role: 'tool', toolCallId: id, content: result };
      const name = toolNames.get(id);
      if (name) message.name = name;
      if (block.is_error === true) message.isError = true;
      tools.push(message);
      continue;
    }
    const part = contentPart(block);
    if (part === null) continue;
    if ('unsupported' in part) return part;
    parts.push(part);
  }
  return parts.length > 0 ? [...tools, { role: 'user', content: parts }] : tools;
}

function resultParts(content: unknown): NeutralPart[] | Unsupported {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  const parts: NeutralPart[] = [];
  for (const block of content) {
    if (!isRecord(block)) continue;
    const part = contentPart(block);
    if (part === null) continue;
    if ('unsupported' in part) return part;
    parts.push(part);
  }
  return parts;
}

function contentPart(block: Record<string, unknown>): NeutralPart | Unsupported | null {
  if (block.type === 'text') return typeof block.text === 'string' ? { type: 'text', text: block.text } : null;
  if (block.type === 'image') {
    const source = imageSource(block.source);
    return source ? { type: 'image', source } : null;
  }
  if (typeof block.type === 'string') return { unsupported: `a "${block.type}" content block cannot be translated for this tier` };
  return null;
}

function imageSource(source: unknown): ImageSource | null {
  if (!isRecord(source)) return null;
  if (source.type === 'base64' && typeof source.data === 'string') {
    return { kind: 'base64', mediaType: stringField(source.media_type) ?? 'image/png', data: source.data };
  }
  if (source.type === 'url' && typeof source.url === 'string') return { kind: 'url', url: source.url };
  return null;
}

function assistantParts(content: unknown, toolNames: Map<string, string>): AssistantPart[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  const parts: AssistantPart[] = [];
  for (const block of content) {
    if (!isRecord(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') parts.push({ type: 'text', text: block.text });
    else if (block.type === 'thinking' && typeof block.thinking === 'string') {
      const signature = stringField(block.signature);
      parts.push(signature ? { type: 'reasoning', text: block.thinking, signature } : { type: 'reasoning', text: block.thinking });
    } else if (block.type === 'redacted_thinking' && typeof block.data === 'string') {
      parts.push({ type: 'reasoning', text: '', redacted: block.data });
    } else if (block.type === 'tool_use') {
      const id = stringField(block.id) ?? '';
      const name = stringField(block.name) ?? '';
      toolNames.set(id, name);
      parts.push({ type: 'tool_call', id, name, arguments: JSON.stringify(block.input ?? {}) });
    }
  }
  return parts;
}

/** Tools that run at Anthropic itself (server tools). */
const AT_ANTHROPIC = /^(web_search|web_fetch|code_execution)_/;

export function toolList(value: unknown): { tools: NeutralTool[]; hosted: string[] } | Unsupported {
  const tools: NeutralTool[] = [];
  const hosted: string[] = [];
  if (!Array.isArray(value)) return { tools, hosted };
  for (const tool of value) {
    if (!isRecord(tool)) continue;
    // A typed tool: Anthropic's server tools (web_search_…) run there and are left out for
    // another tier; its client tools (bash_…, text_editor_…) have schemas only Anthropic knows.
    if (typeof tool.type === 'string' && tool.type !== 'custom') {
      if (!AT_ANTHROPIC.test(tool.type)) hosted.push(tool.type);
      continue;
    }
    const name = stringField(tool.name);
    if (!name) continue;
    const neutral: NeutralTool = { name, parameters: isRecord(tool.input_schema) ? tool.input_schema : { type: 'object', properties: {} } };
    const description = stringField(tool.description);
    if (description) neutral.description = description;
    tools.push(neutral);
  }
  return { tools, hosted };
}

function toolChoice(value: unknown): { choice?: NeutralToolChoice; parallel?: boolean } {
  if (!isRecord(value)) return {};
  const parallel = value.disable_parallel_tool_use === true ? false : undefined;
  if (value.type === 'auto') return { choice: 'auto', parallel };
  if (value.type === 'any') return { choice: 'required', parallel };
  if (value.type === 'none') return { choice: 'none', parallel };
  if (value.type === 'tool' && typeof value.name === 'string') return { choice: { name: value.name }, parallel };
  return { parallel };
}

/** The answer's cap the body sets. */
export function messagesMaxTokens(body: Record<string, unknown>): number | undefined {
  return numberField(body.max_tokens);
}
