import type { OutgoingHttpHeaders } from 'node:http';
import { isRecord } from '../util/is-record.js';

/**
 * What `llm-route mock` needs of an API to answer in it (OpenAI Chat Completions, Ollama's
 * /api/chat, Anthropic Messages): how to read a request, the bytes of an answer, and the API's
 * own error body. The fault flags (server.ts) act the same on every API.
 */

/** The few fields of a request the mock reads. */
export interface MockRequest {
  model: string;
  stream: boolean;
  /** OpenAI's stream_options.include_usage. */
  includeUsage: boolean;
  promptTokens: number;
}

/** One answer being written: its number on this mock (ids), and the request it answers. */
export interface Answer {
  sequence: number;
  request: MockRequest;
  /** Completion tokens, as usage reports them. */
  tokens: number;
  /** performance.now() at its arrival (Ollama reports its durations). */
  startedAt: number;
}

/** The bytes of one answer, each a whole event (or NDJSON line) of the API. */
export interface Frames {
  /** Written with the headers, before the TTFT delay ('' for none). */
  open: string;
  /** The i-th content event. */
  content(i: number): string;
  /** A content event cut off mid-JSON (--malformed-rate). */
  malformed(): string;
  /** What ends a stream: the finish, usage. */
  end(): string;
  /** The whole answer of a non-streaming request. */
  whole(): string;
}

export interface MockWire {
  /** The fields the mock reads, or why the body is not such a request (a 400). */
  read(body: unknown, fallbackModel: string): MockRequest | string;
  streamHeaders: OutgoingHttpHeaders;
  frames(answer: Answer): Frames;
  /** The API's error body for `status`; `code` is OpenAI's error code where it has one. */
  error(status: number, message: string, code?: string | null): string;
}

/**
 * An endpoint of the mock: an answer (the fault flags apply), or a fact about the server (a
 * model list, a version) as JSON; `rest` is what follows a prefix key (`/v1/models/{rest}`).
 * `before`: a fact an answer's endpoint gives instead, for a body that asks no answer (Ollama's
 * load request), without the fault flags.
 */
export type Endpoint =
  | { method: 'POST'; wire: MockWire; before?: (body: unknown) => Facts | undefined }
  | { method: 'GET' | 'POST'; facts: (body: unknown, rest: string) => Facts };

/** A fact about the server as it answers it: a status and a JSON body. */
export interface Facts {
  status: number;
  json: unknown;
}

/** One API the mock speaks: where it sits and what it serves. */
export interface MockApi {
  /** Appended to the origin for a provider's base_url: `/v1` for OpenAI, nothing for Ollama and Anthropic. */
  basePath: string;
  /** By exact path; a key ending in `/` serves every path under it (`/v1/models/{id}`). */
  endpoints: Record<string, Endpoint>;
  /** Errors outside an answer (no such path, a bad body) in the API's shape. */
  error: MockWire['error'];
}

/** A rough token count: the words of a text, of a message's text content, or of a list of either. */
export function countWords(value: unknown): number {
  if (typeof value === 'string') return value.match(/\S+/g)?.length ?? 0;
  if (Array.isArray(value)) return value.reduce((sum: number, item: unknown) => sum + countWords(item), 0);
  if (!isRecord(value)) return 0;
  return typeof value.text === 'string' ? countWords(value.text) : countWords(value.content);
}

/**
 * A real server's chat template writes the tool definitions into the prompt, and its usage
 * counts them: about one token per 4 characters of their JSON. Without them an agent's prompt
 * (Codex sends ~18 KB of tools) reads far below what llm-route counted, and the mock looked like
 * a server that silently truncates (see docs/fit.md).
 */
export function toolTokens(tools: unknown): number {
  return Array.isArray(tools) && tools.length > 0 ? Math.ceil(JSON.stringify(tools).length / 4) : 0;
}

/** The words of every answer: one per token, the first naming the mock so a reader can tell who answered. */
export function completionWords(name: string, tokens: number): string[] {
  const words = 'hello from a simulated upstream: this answer streams one word per chunk so you can watch time to first token and failover happen live.'.split(
    ' ',
  );
  return Array.from({ length: tokens }, (_, i) => (i === 0 ? `[${name}]` : ` ${words[(i - 1) % words.length]}`));
}
