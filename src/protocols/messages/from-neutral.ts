import type { Tier } from '../../config/schema.js';
import { parseArguments } from '../core/fields.js';
import { answerTool } from '../translate/answer-tool.js';
import { capTokens } from '../translate/max-tokens.js';
import { budgetOfEffort } from '../translate/reasoning.js';
import { deepToolArguments, hostedToolsUnsupported, type AssistantPart, type NeutralPart, type NeutralRequest } from '../core/neutral.js';
import type { Unsupported } from '../core/types.js';

type Block = Record<string, unknown>;
type Turn = { role: 'user' | 'assistant'; content: Block[] };

/** A neutral request as an Anthropic Messages body for `tier`. */
export function messagesFromNeutral(request: NeutralRequest, tier: Tier, stream: boolean): Record<string, unknown> | Unsupported {
  if (request.choices !== undefined && request.choices > 1) return { unsupported: 'n > 1 (several choices) is not something Anthropic Messages can do' };
  if (request.previousResponseId) return { unsupported: 'previous_response_id needs a tier that serves the Responses API itself' };
  if (request.hostedTools?.length) return hostedToolsUnsupported(request.hostedTools);
  const answer = request.responseFormat ? answerTool(request.responseFormat) : null;
  if (answer && 'unsupported' in answer) return answer;
  const deep = deepToolArguments(request);
  if (deep) return deep;

  const body: Record<string, unknown> = {
    model: tier.model,
    // Anthropic requires max_tokens: the client's, else the tier's.
    max_tokens: capTokens(request.maxTokens ?? tier.max_tokens, tier),
    messages: turns(request),
  };
  if (request.system.length > 0) body.system = request.system.length === 1 ? request.system[0] : request.system.map((text) => ({ type: 'text', text }));
  // OpenAI's temperature goes to 2, Anthropic's to 1.
  if (request.temperature !== undefined) body.temperature = Math.min(1, request.temperature);
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.topK !== undefined) body.top_k = request.topK;
  if (request.stop) body.stop_sequences = request.stop;
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      name: tool.name,
      ...(tool.description ? { description: tool.description } : {}),
      input_schema: tool.parameters,
    }));
    const choice = request.toolChoice;
    const disableParallel = request.parallelToolCalls === false ? { disable_parallel_tool_use: true } : {};
    if (choice === 'auto' || (choice === undefined && request.parallelToolCalls === false)) body.tool_choice = { type: 'auto', ...disableParallel };
    else if (choice === 'required') body.tool_choice = { type: 'any', ...disableParallel };
    else if (choice === 'none') body.tool_choice = { type: 'none' };
    else if (typeof choice === 'object') body.tool_choice = { type: 'tool', name: choice.name, ...disableParallel };
  }
  if (answer) forceAnswerTool(body, answer);
  if (request.reasoningEffort) withThinking(body, request.reasoningEffort);
  if (request.user) body.metadata = { user_id: request.user };
  if (stream) body.stream = true;
  return body;
}

/**
 * An effort as Anthropic's thinking budget, where Anthropic allows thinking: not with a forced
 * tool, nor with sampling other than its own (temperature 1, no top_k, top_p ≥ 0.95).
 */
function withThinking(body: Record<string, unknown>, effort: string): void {
  const choice = (body.tool_choice as Block | undefined)?.type;
  if (choice === 'any' || choice === 'tool') return;
  if ((body.temperature !== undefined && body.temperature !== 1) || body.top_k !== undefined || (typeof body.top_p === 'number' && body.top_p < 0.95)) return;
  const budget = budgetOfEffort(effort, body.max_tokens as number);
  if (budget !== undefined) body.thinking = { type: 'enabled', budget_tokens: budget };
}

/**
 * Structured output as a forced tool: the only tool, or, beside the client's own tools, one
 * of them the model must call (`any`) — unless the client named the tool it wants.
 */
function forceAnswerTool(body: Record<string, unknown>, answer: Block): void {
  const tools = Array.isArray(body.tools) ? (body.tools as Block[]) : [];
  const choice = body.tool_choice as Block | undefined;
  if (choice?.type === 'tool') return void (body.tools = [...tools, answer]);
  const usable = choice?.type === 'none' ? [] : tools;
  body.tools = [...usable, answer];
  const disableParallel = choice?.disable_parallel_tool_use === true ? { disable_parallel_tool_use: true } : {};
  body.tool_choice = usable.length > 0 ? { type: 'any', ...disableParallel } : { type: 'tool', name: answer.name };
}

/**
 * Neutral messages as Anthropic turns: tool results go into the user turn that follows the
 * tool calls (one tool_result per tool_use, ids kept), turns of one role are merged (the API
 * wants them alternating), and empty turns are left out.
 */
function turns(request: NeutralRequest): Turn[] {
  const out: Turn[] = [];
  const push = (role: Turn['role'], blocks: Block[]): void => {
    if (blocks.length === 0) return;
    const last = out.at(-1);
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const message of request.messages) {
    if (message.role === 'assistant') push('assistant', assistantBlocks(message.content));
    else if (message.role === 'user') push('user', message.content.map(contentBlock));
    else {
      const result: Block = { type: 'tool_result', tool_use_id: message.toolCallId, content: message.content.map(contentBlock) };
      if (message.isError) result.is_error = true;
      push('user', [result]);
    }
  }
  return out;
}

function assistantBlocks(parts: AssistantPart[]): Block[] {
  const blocks: Block[] = [];
  for (const part of parts) {
    if (part.type === 'text') {
      if (part.text !== '') blocks.push({ type: 'text', text: part.text });
    } else if (part.type === 'tool_call') {
      blocks.push({ type: 'tool_use', id: part.id, name: part.name, input: parseArguments(part.arguments) });
    } else if (part.redacted) {
      blocks.push({ type: 'redacted_thinking', data: part.redacted });
    } else if (part.signature) {
      // Only thinking Anthropic signed goes back to it: a signature cannot be made up.
      blocks.push({ type: 'thinking', thinking: part.text, signature: part.signature });
    }
  }
  return blocks;
}

function contentBlock(part: NeutralPart): Block {
  if (part.type === 'text') return { type: 'text', text: part.text };
  const source =
    part.source.kind === 'url' ? { type: 'url', url: part.source.url } : { type: 'base64', media_type: part.source.mediaType, data: part.source.data };
  return { type: 'image', source };
}
