import { isRecord } from '../../util/is-record.js';
import { numberField, stringField, textOf } from '../core/fields.js';
import { imageFromUrl } from '../translate/images.js';
import type { AssistantPart, NeutralMessage, NeutralPart, NeutralRequest, NeutralTool, NeutralToolChoice, ResponseFormat } from '../core/neutral.js';
import type { Unsupported } from '../core/types.js';

/**
 * A Responses body as a neutral request. Stateless: the whole conversation is in `input`
 * (`store` is not honoured on a translated tier; `previous_response_id` needs a tier that
 * serves Responses itself).
 */
export function responsesToNeutral(body: Record<string, unknown>): NeutralRequest | Unsupported {
  const request: NeutralRequest = { system: [], messages: [], tools: [] };
  const instructions = stringField(body.instructions);
  if (instructions) request.system.push(instructions);
  const input = body.input;
  if (typeof input === 'string') request.messages.push({ role: 'user', content: [{ type: 'text', text: input }] });
  else if (Array.isArray(input)) {
    const converted = inputItems(input, request);
    if (converted) return converted;
  }
  // The body's tools first, then those additional_tools items added.
  const tools = toolList(body.tools);
  request.tools = [...tools.tools, ...request.tools];
  const hosted = [...tools.hosted, ...(request.hostedTools ?? [])];
  if (hosted.length > 0) request.hostedTools = hosted;
  const choice = toolChoice(body.tool_choice);
  if (choice) request.toolChoice = choice;
  if (typeof body.parallel_tool_calls === 'boolean') request.parallelToolCalls = body.parallel_tool_calls;
  const maxTokens = responsesMaxTokens(body);
  if (maxTokens !== undefined) request.maxTokens = maxTokens;
  const temperature = numberField(body.temperature);
  if (temperature !== undefined) request.temperature = temperature;
  const topP = numberField(body.top_p);
  if (topP !== undefined) request.topP = topP;
  const format = isRecord(body.text) ? responseFormat(body.text.format) : undefined;
  if (format) request.responseFormat = format;
  const effort = isRecord(body.reasoning) ? stringField(body.reasoning.effort) : undefined;
  if (effort) request.reasoningEffort = effort;
  const previous = stringField(body.previous_response_id);
  if (previous) request.previousResponseId = previous;
  const user = stringField(body.user);
  if (user) request.user = user;
  return request;
}

/** Input items in order; consecutive function calls and reasoning join one assistant turn. Returns Unsupported, or nothing. */
function inputItems(items: unknown[], request: NeutralRequest): Unsupported | undefined {
  const toolNames = new Map<string, string>();
  let assistant: AssistantPart[] | null = null;
  const flush = (): void => {
    if (assistant && assistant.length > 0) request.messages.push({ role: 'assistant', content: assistant });
    assistant = null;
  };
  const assistantParts = (): AssistantPart[] => (assistant ??= []);
  for (const item of items) {
    if (!isRecord(item)) continue;
    const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
    switch (type) {
      case 'message': {
        const role = item.role;
        if (role === 'system' || role === 'developer') {
          flush();
          const text = textOf(item.content);
          if (text) request.system.push(text);
        } else if (role === 'assistant') {
          const text = textOf(item.content);
          if (text) assistantParts().push({ type: 'text', text });
        } else {
          flush();
          const content = userParts(item.content);
          if ('unsupported' in content) return content;
          request.messages.push({ role: 'user', content });
        }
        break;
      }
      case 'function_call': {
        const id = stringField(item.call_id) ?? stringField(item.id) ?? '';
        const name = stringField(item.name) ?? '';
        toolNames.set(id, name);
        assistantParts().push({ type: 'tool_call', id, name, arguments: stringField(item.arguments) ?? '{}' });
        break;
      }
      case 'reasoning': {
        const summary = Array.isArray(item.summary) ? item.summary.map((s) => (isRecord(s) && typeof s.text === 'string' ? s.text : '')).join('\n') : '';
        if (summary) assistantParts().push({ type: 'reasoning', text: summary });
        break;
      }
      case 'additional_tools': {
        // Tools Codex adds in the input rather than in `tools`.
        const more = toolList(item.tools);
        request.tools.push(...more.tools);
        if (more.hosted.length > 0) request.hostedTools = [...(request.hostedTools ?? []), ...more.hosted];
        break;
      }
      case 'function_call_output': {
        flush();
        const id = stringField(item.call_id) ?? '';
        const output = item.output;
        const content = typeof output === 'string' ? [{ type: 'text' as const, text: output }] : userParts(output);
        if ('unsupported' in content) return content;
        const message: NeutralMessage = { role: 'tool', toolCallId: id, content };
        const name = toolNames.get(id);
        if (name) message.name = name;
        request.messages.push(message);
        break;
      }
      default:
        return { unsupported: `a ${JSON.stringify(type) ?? 'typeless'} input item needs a tier that serves the Responses API itself` };
    }
  }
  flush();
  return undefined;
}

function userParts(content: unknown): NeutralPart[] | Unsupported {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  const parts: NeutralPart[] = [];
  for (const part of content) {
    if (!isRecord(part)) continue;
    if ((part.type === 'input_text' || part.type === 'output_text') && typeof part.text === 'string') parts.push({ type: 'text', text: part.text });
    else if (part.type === 'input_image' && typeof part.image_url === 'string') parts.push({ type: 'image', source: imageFromUrl(part.image_url) });
    else if (typeof part.type === 'string') return { unsupported: `an "${part.type}" content part needs a tier that serves the Responses API itself` };
  }
  return parts;
}

/** Tools that run at OpenAI: a tier that is not OpenAI has none of them, so they are left out. */
const AT_OPENAI = new Set(['web_search', 'web_search_preview', 'file_search', 'code_interpreter', 'image_generation', 'mcp']);

/** Function tools (those in a namespace too); `hosted`: tools only OpenAI can carry (custom, local_shell, computer use, …). */
export function toolList(value: unknown, namespace?: string): { tools: NeutralTool[]; hosted: string[] } {
  const tools: NeutralTool[] = [];
  const hosted: string[] = [];
  if (!Array.isArray(value)) return { tools, hosted };
  for (const tool of value) {
    if (!isRecord(tool) || typeof tool.type !== 'string') continue;
    if (tool.type === 'namespace' && namespace === undefined) {
      const inner = toolList(tool.tools, stringField(tool.name) ?? '');
      tools.push(...inner.tools);
      hosted.push(...inner.hosted);
      continue;
    }
    if (tool.type !== 'function') {
      if (!AT_OPENAI.has(tool.type)) hosted.push(tool.type);
      continue;
    }
    const name = stringField(tool.name);
    if (!name) continue;
    const neutral: NeutralTool = { name, parameters: isRecord(tool.parameters) ? tool.parameters : { type: 'object', properties: {} } };
    if (namespace) neutral.namespace = namespace;
    const description = stringField(tool.description);
    if (description) neutral.description = description;
    if (typeof tool.strict === 'boolean') neutral.strict = tool.strict;
    tools.push(neutral);
  }
  return { tools, hosted };
}

function toolChoice(value: unknown): NeutralToolChoice | undefined {
  if (value === 'auto' || value === 'none' || value === 'required') return value;
  if (isRecord(value) && value.type === 'function' && typeof value.name === 'string') return { name: value.name };
  return undefined;
}

function responseFormat(value: unknown): ResponseFormat | undefined {
  if (!isRecord(value)) return undefined;
  if (value.type === 'json_object') return { type: 'json_object' };
  if (value.type === 'json_schema') {
    const format: ResponseFormat = { type: 'json_schema', name: stringField(value.name) ?? 'response', schema: isRecord(value.schema) ? value.schema : {} };
    if (typeof value.strict === 'boolean') format.strict = value.strict;
    return format;
  }
  return undefined;
}

/** The answer's cap the body sets. */
export function responsesMaxTokens(body: Record<string, unknown>): number | undefined {
  return numberField(body.max_output_tokens);
}
