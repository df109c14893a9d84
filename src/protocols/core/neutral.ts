import { MAX_JSON_DEPTH } from '../../http/json-depth.js';
import { argumentsTooDeep } from './fields.js';
import type { Usage } from './usage.js';

/**
 * The neutral model every translation goes through: a client codec turns its protocol's
 * body into a NeutralRequest, an upstream codec turns it into its own; upstream events are
 * read into StreamParts (stream-part.ts) that a client codec renders. N codecs around one
 * model, never a table of protocol pairs. Same protocol in and out never comes here: it is relayed.
 */

export type NeutralPart = { type: 'text'; text: string } | { type: 'image'; source: ImageSource };

export type ImageSource = { kind: 'url'; url: string } | { kind: 'base64'; mediaType: string; data: string };

/** A tool call as the model made it; `arguments` is JSON text, kept as the model wrote it. */
export interface ToolCall {
  type: 'tool_call';
  id: string;
  name: string;
  arguments: string;
}

/** Reasoning ("thinking") the model showed; Anthropic signs it, and only signed thinking goes back to Anthropic. */
export interface Reasoning {
  type: 'reasoning';
  text: string;
  signature?: string;
  /** Anthropic's redacted_thinking payload (opaque). */
  redacted?: string;
}

export type AssistantPart = { type: 'text'; text: string } | Reasoning | ToolCall;

export type NeutralMessage =
  | { role: 'user'; content: NeutralPart[] }
  | { role: 'assistant'; content: AssistantPart[] }
  /** The result of tool call `toolCallId`; `name` is the tool's name when the history tells it. */
  | { role: 'tool'; toolCallId: string; name?: string; content: NeutralPart[]; isError?: boolean };

export interface NeutralTool {
  name: string;
  /** The Responses namespace the tool sits in (Codex groups tools so): its calls name it again. */
  namespace?: string;
  description?: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
  strict?: boolean;
}

export type NeutralToolChoice = 'auto' | 'none' | 'required' | { name: string };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean };

export interface NeutralRequest {
  /** System prompt blocks in order (system/developer messages, Anthropic's system, Responses' instructions). */
  system: string[];
  messages: NeutralMessage[];
  tools: NeutralTool[];
  toolChoice?: NeutralToolChoice;
  parallelToolCalls?: boolean;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stop?: string[];
  seed?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  responseFormat?: ResponseFormat;
  /** OpenAI's reasoning effort (chat `reasoning_effort`, Responses `reasoning.effort`). */
  reasoningEffort?: string;
  user?: string;
  /**
   * What only some tiers can carry. A codec that cannot carry one of these skips the tier
   * (attempt outcome `unsupported`), it never drops it silently.
   */
  choices?: number;
  previousResponseId?: string;
  /**
   * Tools of one provider's own kinds that the client runs (Anthropic's bash_…, text_editor_…,
   * Responses' custom and local_shell tools), by type: only that provider can carry them.
   * Tools that run at the provider (web_search, file_search, …) are not here: a tier that is
   * not that provider has none, so they are left out and the model answers without them.
   */
  hostedTools?: string[];
}

/** Reasoning efforts that ask for none (Chat `reasoning_effort`, Responses `reasoning.effort`). */
export const NO_REASONING_EFFORTS: ReadonlySet<string> = new Set(['none', 'minimal']);

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

/** A turn that made tool calls ended in them, whatever the upstream said (Ollama says "stop"). */
export function settledFinish(reason: FinishReason, madeToolCalls: boolean): FinishReason {
  return madeToolCalls && reason === 'stop' ? 'tool_calls' : reason;
}

/** What an answer says of itself, for traces: the upstream's own name for the model that answered, and why it ended (neutral words). */
export interface AnswerFacts {
  model?: string;
  finish?: FinishReason;
}

/** A whole (non-streaming) answer. */
export interface NeutralResponse {
  id?: string;
  model?: string;
  content: AssistantPart[];
  finishReason: FinishReason;
  usage?: Usage;
}

/**
 * A whole answer from what a decoder read: the finish settled by whether it made tool calls;
 * id, model and usage kept when the upstream sent them.
 */
export function wholeResponse(content: AssistantPart[], finish: FinishReason, sent: { id?: unknown; model?: unknown; usage?: Usage }): NeutralResponse {
  const response: NeutralResponse = {
    content,
    finishReason: settledFinish(
      finish,
      content.some((part) => part.type === 'tool_call'),
    ),
  };
  if (typeof sent.id === 'string' && sent.id !== '') response.id = sent.id;
  if (typeof sent.model === 'string' && sent.model !== '') response.model = sent.model;
  if (sent.usage) response.usage = sent.usage;
  return response;
}

/** The text a tokenizer should count for a request: every text part, in order. */
export function requestText(request: NeutralRequest): string {
  const texts: string[] = [...request.system];
  for (const message of request.messages) {
    for (const part of message.content) {
      if (part.type === 'text') texts.push(part.text);
      else if (part.type === 'tool_call') texts.push(part.name, part.arguments);
      else if (part.type === 'reasoning') texts.push(part.text);
    }
  }
  for (const tool of request.tools) texts.push(tool.name, tool.description ?? '', JSON.stringify(tool.parameters));
  return texts.join('\n');
}

/** Why a tier in another protocol cannot carry a request with provider-specific client tools. */
export function hostedToolsUnsupported(types: string[]): { unsupported: string } {
  return {
    unsupported: `tools of type ${[...new Set(types)].join(', ')} are defined by the client's own provider; only a tier of that provider (relayed) can carry them`,
  };
}

/**
 * Tool-call arguments are a JSON string inside the body, so the body's nesting limit does not
 * see them; a protocol that sends them parsed (Anthropic, Ollama) would overflow the stack
 * encoding arguments nested deeper than the same limit.
 */
export function deepToolArguments(request: NeutralRequest): { unsupported: string } | null {
  for (const message of request.messages) {
    for (const part of message.content) {
      if (part.type === 'tool_call' && argumentsTooDeep(part.arguments)) {
        return { unsupported: `the arguments of tool call ${part.id} nest deeper than ${MAX_JSON_DEPTH} levels` };
      }
    }
  }
  return null;
}

/** A one-message request in no protocol's shape, for health checks and benchmarks (each wire encodes it its own way). */
export function textRequest(prompt: string, maxTokens: number): NeutralRequest {
  return { system: [], messages: [{ role: 'user', content: [{ type: 'text', text: prompt }] }], tools: [], maxTokens };
}
