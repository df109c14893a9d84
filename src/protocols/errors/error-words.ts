import { errorText } from '../../util/error-text.js';
import { isRecord } from '../../util/is-record.js';
import type { UpstreamError } from './rejections.js';

/**
 * What an upstream's error body says, in its own words (never the whole body: it may echo
 * the prompt), whatever shape the server uses: OpenAI's and llama.cpp's
 * `{"error":{"message","code","type"}}`, Anthropic's `{"type":"error","error":{…}}`,
 * Ollama's `{"error":"…"}`, a bare `{"message":…}`, or plain text.
 */
export function errorWords(status: number, body: string): UpstreamError {
  const words: UpstreamError = { status, message: errorText(body) };
  try {
    const parsed: unknown = JSON.parse(body);
    const error = isRecord(parsed) ? parsed.error : undefined;
    if (isRecord(error)) {
      if (typeof error.code === 'string' || typeof error.code === 'number') words.code = error.code;
      if (typeof error.type === 'string') words.type = error.type;
    }
  } catch {
    // not JSON: only the text
  }
  return words;
}
