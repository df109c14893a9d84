import { errorText } from '../util/error-text.js';
import { isRecord } from '../util/is-record.js';

/** What an upstream's error body says, in its own words (never the whole body: it may echo the prompt). */
export interface ErrorWords {
  message: string | undefined;
  /** `error.code`, else `error.type` (OpenAI, Anthropic, llama.cpp, vLLM all put one there). */
  code: string | undefined;
}

/**
 * Reads the error of any body shape the servers behind llm-route use: OpenAI's and
 * llama.cpp's `{"error":{"message","code","type"}}`, Anthropic's `{"type":"error","error":{…}}`,
 * Ollama's `{"error":"…"}`, a bare `{"message":…}`, or plain text.
 */
export function errorWords(body: string): ErrorWords {
  return { message: errorText(body), code: errorCode(body) };
}

function errorCode(body: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    const error = isRecord(parsed) ? parsed.error : undefined;
    if (!isRecord(error)) return undefined;
    return typeof error.code === 'string' ? error.code : typeof error.type === 'string' ? error.type : undefined;
  } catch {
    return undefined;
  }
}
