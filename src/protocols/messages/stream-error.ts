/** The event a Messages client gets when a committed stream cannot go on (the SDKs raise on it); no message_stop follows. */
export function messagesStreamError(message: string): string {
  return `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'api_error', message: `llm-route: ${message}` } })}\n\n`;
}
