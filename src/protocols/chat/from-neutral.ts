import type { Provider, Tier } from '../../config/schema.js';
import { imageToUrl } from '../translate/images.js';
import { capTokens } from '../translate/max-tokens.js';
import { hostedToolsUnsupported, type NeutralMessage, type NeutralPart, type NeutralRequest } from '../core/neutral.js';
import type { Unsupported } from '../core/types.js';

/** A neutral request as a Chat Completions body for `tier`. */
export function chatFromNeutral(request: NeutralRequest, provider: Provider, tier: Tier, stream: boolean): Record<string, unknown> | Unsupported {
  if (request.previousResponseId) return { unsupported: 'previous_response_id needs a tier that serves the Responses API itself' };
  if (request.hostedTools?.length) return hostedToolsUnsupported(request.hostedTools);
  const messages: Record<string, unknown>[] = [];
  // One system message: several confuse the chat templates of local servers.
  if (request.system.length > 0) messages.push({ role: 'system', content: request.system.join('\n\n') });
  for (const message of request.messages) messages.push(...chatMessages(message));

  const body: Record<string, unknown> = { model: tier.model, messages };
  const maxTokens = capTokens(request.maxTokens, tier);
  if (maxTokens !== undefined) {
    // OpenAI's newer models refuse max_tokens; the local servers all know it.
    body[provider.local ? 'max_tokens' : 'max_completion_tokens'] = maxTokens;
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.stop) body.stop = request.stop;
  if (request.seed !== undefined) body.seed = request.seed;
  if (request.frequencyPenalty !== undefined) body.frequency_penalty = request.frequencyPenalty;
  if (request.presencePenalty !== undefined) body.presence_penalty = request.presencePenalty;
  if (request.choices !== undefined) body.n = request.choices;
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: {
        name: tool.name,
        ...(tool.description ? { description: tool.description } : {}),
        parameters: tool.parameters,
        ...(tool.strict !== undefined ? { strict: tool.strict } : {}),
      },
    }));
    if (request.toolChoice) {
      body.tool_choice = typeof request.toolChoice === 'string' ? request.toolChoice : { type: 'function', function: { name: request.toolChoice.name } };
    }
    if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;
  }
  if (request.responseFormat && request.responseFormat.type !== 'text') {
    body.response_format =
      request.responseFormat.type === 'json_object'
        ? { type: 'json_object' }
        : {
            type: 'json_schema',
            json_schema: {
              name: request.responseFormat.name,
              schema: request.responseFormat.schema,
              ...(request.responseFormat.strict !== undefined ? { strict: request.responseFormat.strict } : {}),
            },
          };
  }
  if (request.reasoningEffort) body.reasoning_effort = request.reasoningEffort;
  if (request.user) body.user = request.user;
  if (stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}

function chatMessages(message: NeutralMessage): Record<string, unknown>[] {
  switch (message.role) {
    case 'user':
      return [{ role: 'user', content: chatContent(message.content) }];
    case 'assistant': {
      const text = message.content
        .filter((part) => part.type === 'text')
        .map((part) => part.text)
        .join('');
      const calls = message.content.filter((part) => part.type === 'tool_call');
      const out: Record<string, unknown> = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text };
      if (calls.length > 0) {
        out.tool_calls = calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }));
      }
      return [out];
    }
    case 'tool': {
      // A tool message carries text only; images it returned follow as a user message.
      const text = message.content
        .filter((part) => part.type === 'text')
        .map((part) => part.text)
        .join('\n');
      const images = message.content.filter((part) => part.type === 'image');
      const out: Record<string, unknown>[] = [{ role: 'tool', tool_call_id: message.toolCallId, content: text }];
      if (images.length > 0) out.push({ role: 'user', content: chatContent(images) });
      return out;
    }
  }
}

/** A plain string when the content is one text part (what every server takes), else parts. */
function chatContent(parts: NeutralPart[]): string | Record<string, unknown>[] {
  if (parts.length === 1 && parts[0].type === 'text') return parts[0].text;
  return parts.map((part) => (part.type === 'text' ? { type: 'text', text: part.text } : { type: 'image_url', image_url: { url: imageToUrl(part.source) } }));
}
