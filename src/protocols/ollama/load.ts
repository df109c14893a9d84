import type { LoadAsk, ModelLoading } from '../core/client-codec.js';
import type { OllamaForm } from './render.js';

/**
 * Ollama's load request: /api/generate with no prompt, /api/chat with no messages. Ollama loads
 * the model (with `keep_alive` zero: unloads it) and answers one JSON object, whatever `stream`
 * says: `done: true` and `done_reason` "load" or "unload" (docs/protocols.md, "A preload").
 */
export function ollamaLoading(form: OllamaForm): ModelLoading {
  return {
    asks(body) {
      const empty = form === 'generate' ? body.prompt === undefined || body.prompt === '' : isEmptyList(body.messages);
      if (!empty) return undefined;
      return isZeroDuration(body.keep_alive) ? 'unload' : 'load';
    },
    answer: (model, done) => loadAnswer(form, model, done),
  };
}

/** The object Ollama answers a load with, its fields in the order its server writes them. */
function loadAnswer(form: OllamaForm, model: string, done: LoadAsk): Record<string, unknown> {
  const createdAt = new Date().toISOString();
  if (form === 'generate') return { model, created_at: createdAt, response: '', done: true, done_reason: done };
  return { model, created_at: createdAt, message: { role: 'assistant', content: '' }, done: true, done_reason: done };
}

function isEmptyList(value: unknown): boolean {
  return value === undefined || value === null || (Array.isArray(value) && value.length === 0);
}

/** A Go duration of zero, as Ollama reads `keep_alive`: a number of seconds, or text such as "0", "0s", "0m0s". */
const ZERO_TEXT = /^[+-]?(?:0|(?:(?:0+(?:\.0*)?|\.0+)(?:ns|us|µs|μs|ms|s|m|h))+)$/;

export function isZeroDuration(value: unknown): boolean {
  // Seconds, truncated to whole nanoseconds; a negative number is "forever".
  if (typeof value === 'number') return value >= 0 && value < 1e-9;
  return typeof value === 'string' && ZERO_TEXT.test(value);
}
