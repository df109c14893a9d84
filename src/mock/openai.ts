import { isRecord } from '../util/is-record.js';
import type { Answer, Frames, MockApi, MockWire } from './wire.js';
import { countWords, toolTokens } from './wire.js';

// OpenAI Chat Completions as `llm-route mock` writes it (and Ollama's /v1, which speaks it too).

// Everything after `"choices":[` of a chunk, prebuilt so a chunk is one string concatenation.
const ROLE_TAIL = '{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n';
const FINISH_TAIL = '{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n';
const MALFORMED_TAIL = '{"index":0,"delta":{"content":\n\n';
const DONE = 'data: [DONE]\n\n';

/** `words`: the answer's text, one word a chunk; `name` goes in system_fingerprint so a reader can tell who answered. */
export function openaiWire(name: string, words: string[]): MockWire {
  const nameJson = JSON.stringify(name);
  const textJson = JSON.stringify(words.join(''));
  const contentTails = words.map((word) => `{"index":0,"delta":{"content":${JSON.stringify(word)}},"finish_reason":null}]}\n\n`);
  return {
    read: readChatRequest,
    streamHeaders: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' },
    error: openaiError,
    frames(answer: Answer): Frames {
      const { request } = answer;
      const id = `chatcmpl-mock${answer.sequence}`;
      const created = Math.floor(Date.now() / 1000);
      const modelJson = JSON.stringify(request.model);
      const usage = `"usage":{"prompt_tokens":${request.promptTokens},"completion_tokens":${answer.tokens},"total_tokens":${request.promptTokens + answer.tokens}}`;
      const prefix = `data: {"id":"${id}","object":"chat.completion.chunk","created":${created},"model":${modelJson},"system_fingerprint":${nameJson},"choices":[`;
      return {
        open: prefix + ROLE_TAIL,
        content: (i) => prefix + contentTails[i],
        malformed: () => prefix + MALFORMED_TAIL,
        end: () => prefix + FINISH_TAIL + (request.includeUsage ? `${prefix}],${usage}}\n\n` : '') + DONE,
        whole: () =>
          `{"id":"${id}","object":"chat.completion","created":${created},"model":${modelJson},"system_fingerprint":${nameJson},"choices":[{"index":0,"message":{"role":"assistant","content":${textJson}},"logprobs":null,"finish_reason":"stop"}],${usage}}`,
      };
    },
  };
}

/** `llm-route mock` (--protocol openai): Chat Completions and the model list under /v1. */
export function openaiApi(name: string, words: string[]): MockApi {
  const models = { method: 'GET' as const, facts: () => ({ status: 200, json: { object: 'list', data: [modelEntry(name)] } }) };
  return {
    basePath: '/v1',
    endpoints: { '/v1/chat/completions': { method: 'POST', wire: openaiWire(name, words) }, '/v1/models': models, '/v1/models/': openaiModelById },
    error: openaiError,
  };
}

/** GET /v1/models/{id}: any id is served. */
export const openaiModelById = { method: 'GET' as const, facts: (_body: unknown, id: string) => ({ status: 200, json: modelEntry(id) }) };

function modelEntry(id: string) {
  return { id, object: 'model', created: 0, owned_by: 'llm-route-mock' };
}

function readChatRequest(body: unknown, fallbackModel: string) {
  if (!isRecord(body)) return 'the request body must be a JSON object';
  if (!Array.isArray(body.messages)) return 'messages: expected an array of chat messages';
  const streamOptions = body.stream_options;
  return {
    model: typeof body.model === 'string' ? body.model : fallbackModel,
    stream: body.stream === true,
    includeUsage: isRecord(streamOptions) && streamOptions.include_usage === true,
    promptTokens: countWords(body.messages) + toolTokens(body.tools),
  };
}

function openaiError(status: number, message: string, code: string | null = null): string {
  const type = status === 429 ? 'rate_limit_error' : status >= 500 ? 'server_error' : 'invalid_request_error';
  return JSON.stringify({ error: { message, type, param: null, code } });
}
