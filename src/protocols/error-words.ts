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
  try {
    const parsed: unknown = JSON.parse(body);
    if (isRecord(parsed)) {
      const error = parsed.error;
      if (isRecord(error)) {
        const code = typeof error.code === 'string' ? error.code : typeof error.type === 'string' ? error.type : undefined;
        return { message: typeof error.message === 'string' ? error.message : undefined, code };
      }
      if (typeof error === 'string') return { message: error, code: undefined };
      if (typeof parsed.message === 'string') return { message: parsed.message, code: typeof parsed.code === 'string' ? parsed.code : undefined };
    }
  } catch {
    // not JSON: the raw text below
  }
  const text = body.trim().slice(0, 200);
  return { message: text.length > 0 ? text : undefined, code: undefined };
}
