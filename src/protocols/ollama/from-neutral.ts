import type { Tier } from '../../config/schema.js';
import { parseArguments } from '../core/fields.js';
import { capTokens } from '../translate/max-tokens.js';
import { deepToolArguments, hostedToolsUnsupported, type NeutralMessage, type NeutralPart, type NeutralRequest } from '../core/neutral.js';
import { ollamaThink } from '../translate/reasoning.js';
import type { Unsupported } from '../core/types.js';

/** A neutral request as an Ollama /api/chat body for `tier`, with its keep_alive and num_ctx. */
export function ollamaFromNeutral(request: NeutralRequest, tier: Tier, stream: boolean): Record<string, unknown> | Unsupported {
  if (request.choices !== undefined && request.choices > 1) return { unsupported: 'n > 1 (several choices) is not something Ollama can do' };
  if (request.previousResponseId) return { unsupported: 'previous_response_id needs a tier that serves the Responses API itself' };
  if (request.hostedTools?.length) return hostedToolsUnsupported(request.hostedTools);
  const deep = deepToolArguments(request);
  if (deep) return deep;
  const messages: Record<string, unknown>[] = [];
  if (request.system.length > 0) messages.push({ role: 'system', content: request.system.join('\n\n') });
  for (const message of request.messages) {
    const converted = ollamaMessage(message);
    if ('unsupported' in converted) return converted;
    messages.push(converted);
  }
  const body: Record<string, unknown> = { model: tier.model, messages, stream };
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, ...(tool.description ? { description: tool.description } : {}), parameters: tool.parameters },
    }));
  }
  if (request.responseFormat?.type === 'json_object') body.format = 'json';
  else if (request.responseFormat?.type === 'json_schema') body.format = request.responseFormat.schema;
  if (request.reasoningEffort) body.think = ollamaThink(request.reasoningEffort);
  const options: Record<string, unknown> = {};
  if (request.temperature !== undefined) options.temperature = request.temperature;
  if (request.topP !== undefined) options.top_p = request.topP;
  if (request.topK !== undefined) options.top_k = request.topK;
  const maxTokens = capTokens(request.maxTokens, tier);
  if (maxTokens !== undefined) options.num_predict = maxTokens;
  if (request.stop) options.stop = request.stop;
  if (request.seed !== undefined) options.seed = request.seed;
  if (request.frequencyPenalty !== undefined) options.frequency_penalty = request.frequencyPenalty;
  if (request.presencePenalty !== undefined) options.presence_penalty = request.presencePenalty;
  if (tier.ollama.num_ctx !== undefined) options.num_ctx = tier.ollama.num_ctx;
  if (Object.keys(options).length > 0) body.options = options;
  // As written: Ollama takes a duration string or seconds.
  if (tier.ollama.keep_alive !== undefined) body.keep_alive = tier.ollama.keep_alive;
  return body;
}

function ollamaMessage(message: NeutralMessage): Record<string, unknown> | Unsupported {
  switch (message.role) {
    case 'user':
      return withContent({ role: 'user' }, message.content);
    case 'assistant': {
      const out: Record<string, unknown> = {
        role: 'assistant',
        content: message.content
          .filter((p) => p.type === 'text')
          .map((p) => p.text)
          .join(''),
      };
      const thinking = message.content
        .filter((p) => p.type === 'reasoning')
        .map((p) => p.text)
        .join('');
      if (thinking) out.thinking = thinking;
      const calls = message.content.filter((p) => p.type === 'tool_call');
      if (calls.length > 0) out.tool_calls = calls.map((call) => ({ function: { name: call.name, arguments: parseArguments(call.arguments) } }));
      return out;
    }
    case 'tool':
      return withContent({ role: 'tool', ...(message.name ? { tool_name: message.name } : {}) }, message.content);
  }
}

/** Text joined into `content`; images as base64 in `images` (Ollama takes no image URLs). */
function withContent(base: Record<string, unknown>, parts: NeutralPart[]): Record<string, unknown> | Unsupported {
  const images: string[] = [];
  let content = '';
  for (const part of parts) {
    if (part.type === 'text') content += part.text;
    else if (part.source.kind === 'base64') images.push(part.source.data);
    else return { unsupported: 'Ollama takes images as base64 data, not URLs' };
  }
  return images.length > 0 ? { ...base, content, images } : { ...base, content };
}
