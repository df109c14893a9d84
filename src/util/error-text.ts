import { isRecord } from './is-record.js';

/** Characters of a body that is not an error object, kept as its message. */
const RAW_TEXT_CHARS = 200;

/**
 * The error's own words in an upstream error body or stream event: `error.message`, an
 * `error` string (Ollama), or a top-level `message`; failing those, the start of the text
 * itself. undefined for an empty text. Only these words are shown: a whole body may echo the
 * user's prompt.
 */
export function errorText(text: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    if (isRecord(parsed)) {
      const error = parsed.error;
      if (isRecord(error) && typeof error.message === 'string') return error.message;
      if (typeof error === 'string') return error;
      if (typeof parsed.message === 'string') return parsed.message;
    }
  } catch {
    // not JSON: the text itself is the message
  }
  const start = text.trim().slice(0, RAW_TEXT_CHARS);
  return start.length > 0 ? start : undefined;
}
