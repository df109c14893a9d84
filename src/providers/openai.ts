import type { IncomingHttpHeaders } from 'node:http';
import type { Provider, Tier } from '../config/schema.js';
import {
  EVENT_CONTENT, EVENT_DONE, EVENT_ERROR, EVENT_FINISH, EVENT_MALFORMED, EVENT_USAGE, EVENT_USAGE_ONLY,
  type EventFacts, type ProviderAdapter, type StatusVerdict, type UpstreamRequest, type Usage,
} from './types.js';
import { isRecord } from '../util/is-record.js';
import { findUsageObject } from './usage-scan.js';
import { classifyRejection } from '../protocols/rejections.js';

/** OpenAI Chat Completions wire protocol: OpenAI, Ollama /v1, vLLM, llama.cpp, LM Studio, ... */
export const openaiAdapter: ProviderAdapter = {
  buildChatRequest(provider: Provider, tier: Tier, body: Record<string, unknown>, stream: boolean): UpstreamRequest {
    const upstreamBody: Record<string, unknown> = { ...body, model: tier.model };
    if (stream) {
      // Always ask for usage: accounting needs it; the relay hides the chunk from clients that did not ask.
      const options = isRecord(body.stream_options) ? body.stream_options : {};
      upstreamBody.stream_options = { ...options, include_usage: true };
    }
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: stream ? 'text/event-stream' : 'application/json',
      ...provider.headers,
    };
    if (provider.api_key) headers.authorization = `Bearer ${provider.api_key}`;
    return { path: chatPath(provider.base_url), headers, body: JSON.stringify(upstreamBody) };
  },

  inspectEvent(data: string, out: EventFacts): void {
    out.usage = undefined;
    if (data === '[DONE]') {
      out.flags = EVENT_DONE;
      return;
    }
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      out.flags = EVENT_MALFORMED;
      return;
    }
    if (!isRecord(chunk)) {
      out.flags = EVENT_MALFORMED;
      return;
    }
    let flags = 0;
    if (chunk.error != null) flags |= EVENT_ERROR;
    const choices = chunk.choices;
    if (Array.isArray(choices)) {
      for (const choice of choices) {
        if (!isRecord(choice)) continue;
        if (choice.finish_reason != null) flags |= EVENT_FINISH | EVENT_CONTENT;
        if (isRecord(choice.delta) && deltaHasContent(choice.delta)) flags |= EVENT_CONTENT;
      }
    }
    const usage = toUsage(chunk.usage);
    if (usage) {
      out.usage = usage;
      flags |= EVENT_USAGE;
      if (Array.isArray(choices) && choices.length === 0) flags |= EVENT_USAGE_ONLY;
    }
    out.flags = flags;
  },

  classifyStatus(status: number, body: string, _headers: IncomingHttpHeaders): StatusVerdict {
    const message = upstreamMessage(body) ?? `HTTP ${status}`;
    // The error's own words, not the whole body: a body may echo the user's prompt.
    const rejection = classifyRejection({ status, message: upstreamMessage(body), ...upstreamLabels(body) });
    if (status === 429) return { reason: 'rate_limited', failover: true, retryable: true, message };
    // Another tier may have the bigger context, or take this input; this one will not on a retry (500s included).
    if (rejection === 'context_length') return { reason: 'context_length', failover: true, retryable: false, message };
    if (rejection === 'unsupported_input') return { reason: 'unsupported', failover: true, retryable: false, message };
    if (status === 500 || status === 502 || status === 503 || status === 504) {
      return { reason: 'server_error', failover: true, retryable: true, message };
    }
    if (status >= 500) return { reason: 'server_error', failover: true, retryable: false, message };
    if (status === 408 || status === 409) return { reason: 'timeout_or_conflict', failover: true, retryable: false, message };
    if (status === 401 || status === 403) return { reason: 'auth', failover: true, retryable: false, message };
    if (status === 404) return { reason: 'model_not_found', failover: true, retryable: false, message };
    if (status === 400 || status === 413 || status === 422) {
      const reason = rejection === 'content_policy' ? 'content_policy' : 'bad_request';
      return { reason, failover: false, retryable: false, message };
    }
    // 405, 410, 415, ...: a wrong base URL or model on that tier, not something the payload did.
    return { reason: 'client_error', failover: true, retryable: false, message };
  },

  readUsage(body: Buffer): Usage | undefined | 'not_json' {
    const usage = findUsageObject(body);
    if (usage === 'not_json') return usage;
    if (usage === null) return undefined;
    try {
      return toUsage(JSON.parse(usage));
    } catch {
      return 'not_json';
    }
  },
};

function deltaHasContent(delta: Record<string, unknown>): boolean {
  return nonEmptyString(delta.content) || nonEmptyString(delta.reasoning_content) || nonEmptyString(delta.reasoning)
    || nonEmptyString(delta.refusal) || (Array.isArray(delta.tool_calls) && delta.tool_calls.length > 0)
    || isRecord(delta.function_call);
}

function toUsage(value: unknown): Usage | undefined {
  if (!isRecord(value)) return undefined;
  const prompt = value.prompt_tokens, completion = value.completion_tokens;
  if (typeof prompt !== 'number' && typeof completion !== 'number') return undefined;
  const usage: Usage = { prompt_tokens: typeof prompt === 'number' ? prompt : 0, completion_tokens: typeof completion === 'number' ? completion : 0 };
  // OpenAI, llama.cpp and vLLM say how much of the prompt came from their prompt cache here.
  const cached = isRecord(value.prompt_tokens_details) ? value.prompt_tokens_details.cached_tokens : undefined;
  if (typeof cached === 'number') usage.cached_tokens = cached;
  return usage;
}

/** The `error.code` and `error.type` of an OpenAI- or Anthropic-shaped error body. */
function upstreamLabels(body: string): { code?: string | number; type?: string } {
  try {
    const parsed: unknown = JSON.parse(body);
    const error = isRecord(parsed) ? parsed.error : undefined;
    if (!isRecord(error)) return {};
    const labels: { code?: string | number; type?: string } = {};
    if (typeof error.code === 'string' || typeof error.code === 'number') labels.code = error.code;
    if (typeof error.type === 'string') labels.type = error.type;
    return labels;
  } catch {
    return {};
  }
}

/** The upstream's own error message, when its body is OpenAI-shaped (or close). */
function upstreamMessage(body: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    if (isRecord(parsed)) {
      const error = parsed.error;
      if (isRecord(error) && typeof error.message === 'string') return error.message;
      if (typeof error === 'string') return error;
      if (typeof parsed.message === 'string') return parsed.message;
    }
  } catch {
    // not JSON: fall through to the raw text
  }
  const text = body.trim().slice(0, 200);
  return text.length > 0 ? text : undefined;
}

const chatPaths = new Map<string, string>();

function chatPath(baseUrl: string): string {
  let path = chatPaths.get(baseUrl);
  if (path === undefined) {
    path = `${new URL(baseUrl).pathname.replace(/\/+$/, '')}/chat/completions`;
    chatPaths.set(baseUrl, path);
  }
  return path;
}

function nonEmptyString(value: unknown): boolean {
  return typeof value === 'string' && value.length > 0;
}
