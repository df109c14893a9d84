import type { ClientProtocol } from '../../src/telemetry/events.js';

export interface StreamEnding {
  /** terminator: the protocol's clean end; error: its error event; neither: cut without a word. */
  ending: 'terminator' | 'error' | 'neither';
  /** Terminators and error events in the whole stream (a correct stream has exactly one, last). */
  endings: number;
  /** The error event's message, when it ended with one. */
  message?: string;
}

interface Event {
  event: string | null;
  data: unknown;
}

function events(text: string, protocol: ClientProtocol): Event[] {
  // Ollama's stream is one JSON object a line (NDJSON), the others server-sent events.
  if (protocol === 'ollama') return ndjsonEvents(text);
  return text
    .split(/\r?\n\r?\n/)
    .filter((b) => b.trim() !== '')
    .map((block) => {
      let event: string | null = null;
      const data: string[] = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      try {
        return { event, data: JSON.parse(data.join('\n')) as unknown };
      } catch {
        return { event, data: data.join('\n') };
      }
    });
}

function ndjsonEvents(text: string): Event[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return { event: null, data: JSON.parse(line) as unknown };
      } catch {
        return { event: null, data: line };
      }
    });
}

type Json = { type?: string; code?: string; message?: string; error?: { code?: string; type?: string; message?: string } };

const RULES: Record<ClientProtocol, { terminator(e: Event): boolean; error(e: Event): string | null }> = {
  chat: {
    terminator: (e) => e.data === '[DONE]',
    error: (e) => ((e.data as Json)?.error?.code === 'stream_interrupted' ? ((e.data as Json).error?.message ?? '') : null),
  },
  responses: {
    terminator: (e) => (e.data as Json)?.type === 'response.completed',
    error: (e) => (e.event === 'error' && (e.data as Json)?.code === 'stream_interrupted' ? ((e.data as Json).message ?? '') : null),
  },
  messages: {
    terminator: (e) => (e.data as Json)?.type === 'message_stop',
    error: (e) => (e.event === 'error' && (e.data as Json)?.error?.type === 'api_error' ? ((e.data as Json).error?.message ?? '') : null),
  },
  gemini: {
    // A Gemini stream has no terminator: its last chunk carries the finish reason.
    terminator: (e) => typeof (e.data as { candidates?: Array<{ finishReason?: unknown }> })?.candidates?.[0]?.finishReason === 'string',
    error: (e) => {
      const error = (e.data as { error?: { message?: unknown } })?.error;
      return typeof error?.message === 'string' ? error.message : null;
    },
  },
  ollama: {
    terminator: (e) => (e.data as { done?: unknown })?.done === true,
    error: (e) => {
      const error = (e.data as { error?: unknown })?.error;
      return typeof error === 'string' ? error : null;
    },
  },
};

/** How a stream in `protocol` ended: with its terminator, with its error event, or with neither. */
export function streamEnding(protocol: ClientProtocol, text: string): StreamEnding {
  const rules = RULES[protocol];
  const all = events(text, protocol);
  const endings = all.filter((e) => rules.terminator(e) || rules.error(e) !== null).length;
  const last = all.at(-1);
  if (last && rules.terminator(last)) return { ending: 'terminator', endings };
  const message = last ? rules.error(last) : null;
  if (message !== null) return { ending: 'error', endings, message };
  return { ending: 'neither', endings };
}
