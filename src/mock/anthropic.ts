import { isRecord } from '../util/is-record.js';
import type { Answer, Frames, MockApi, MockRequest, MockWire } from './wire.js';
import { countWords, toolTokens } from './wire.js';

/**
 * `llm-route mock --protocol anthropic`: Anthropic's Messages API with the event sequence
 * api.anthropic.com streams (message_start, content_block_start, ping, content_block_delta…,
 * content_block_stop, message_delta with the output usage, message_stop), its error bodies, the
 * model list and count_tokens. One model, `--name`; a message answers any model name.
 */

const CREATED_AT = '2026-01-05T00:00:00Z';

const event = (type: string, data: string): string => `event: ${type}\ndata: {"type":"${type}"${data}}\n\n`;
const BLOCK_START = event('content_block_start', ',"index":0,"content_block":{"type":"text","text":""}') + event('ping', '');
const BLOCK_STOP = event('content_block_stop', ',"index":0');
const MESSAGE_STOP = event('message_stop', '');

export function anthropicWire(words: string[]): MockWire {
  const textJson = JSON.stringify(words.join(''));
  const contents = words.map((word) => event('content_block_delta', `,"index":0,"delta":{"type":"text_delta","text":${JSON.stringify(word)}}`));
  return {
    read: readMessagesRequest,
    streamHeaders: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' },
    error: anthropicError,
    frames(answer: Answer): Frames {
      const { request } = answer;
      const head = `"id":"msg_mock${answer.sequence}","type":"message","role":"assistant","model":${JSON.stringify(request.model)}`;
      const usage = (output: number) =>
        `"usage":{"input_tokens":${request.promptTokens},"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":${output}}`;
      return {
        open: event('message_start', `,"message":{${head},"content":[],"stop_reason":null,"stop_sequence":null,${usage(1)}}`) + BLOCK_START,
        content: (i) => contents[i],
        malformed: () => 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":\n\n',
        end: () =>
          BLOCK_STOP +
          event('message_delta', `,"delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":${answer.tokens}}`) +
          MESSAGE_STOP,
        whole: () => `{${head},"content":[{"type":"text","text":${textJson}}],"stop_reason":"end_turn","stop_sequence":null,${usage(answer.tokens)}}`,
      };
    },
  };
}

export function anthropicApi(name: string, words: string[]): MockApi {
  const entry = (id: string) => ({ type: 'model', id, display_name: id, created_at: CREATED_AT });
  return {
    basePath: '',
    endpoints: {
      '/v1/messages': { method: 'POST', wire: anthropicWire(words) },
      '/v1/messages/count_tokens': { method: 'POST', facts: countTokens },
      '/v1/models': { method: 'GET', facts: () => ({ status: 200, json: { data: [entry(name)], has_more: false, first_id: name, last_id: name } }) },
      '/v1/models/': { method: 'GET', facts: (_body, id) => ({ status: 200, json: entry(id) }) },
    },
    error: anthropicError,
  };
}

function readMessagesRequest(body: unknown): MockRequest | string {
  if (!isRecord(body)) return 'the request body must be a JSON object';
  if (typeof body.model !== 'string') return 'model: Field required';
  if (!Array.isArray(body.messages)) return 'messages: Field required';
  if (typeof body.max_tokens !== 'number') return 'max_tokens: Field required';
  return { model: body.model, stream: body.stream === true, includeUsage: false, promptTokens: promptTokens(body) };
}

function promptTokens(body: Record<string, unknown>): number {
  return countWords(body.system) + countWords(body.messages) + toolTokens(body.tools);
}

function countTokens(body: unknown): { status: number; json: unknown } {
  if (!isRecord(body) || !Array.isArray(body.messages)) return { status: 400, json: JSON.parse(anthropicError(400, 'messages: Field required')) };
  return { status: 200, json: { input_tokens: promptTokens(body) } };
}

/** Anthropic's error types by status (its "Errors" page); 529 is its "overloaded". */
function anthropicError(status: number, message: string): string {
  const type =
    {
      400: 'invalid_request_error',
      401: 'authentication_error',
      403: 'permission_error',
      404: 'not_found_error',
      413: 'request_too_large',
      429: 'rate_limit_error',
      529: 'overloaded_error',
    }[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
  return JSON.stringify({ type: 'error', error: { type, message }, request_id: 'req_llmroutemock' });
}
