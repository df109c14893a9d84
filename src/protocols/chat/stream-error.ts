/** The one SSE event a Chat Completions client gets when a committed stream cannot go on. */
export function chatStreamError(message: string): string {
  const payload = { error: { message: `llm-route: ${message}`, type: 'upstream_error', code: 'stream_interrupted' } };
  return `data: ${JSON.stringify(payload)}\n\n`;
}
