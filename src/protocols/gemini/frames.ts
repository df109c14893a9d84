/**
 * How a Gemini stream's chunks reach its client: with `alt=sse`, each a server-sent event
 * (`data: {…}`, CRLF-terminated as Google's servers write them, no `[DONE]`); without it, one
 * JSON array written as it grows (`[{…}`, then `\r\n,\r\n{…}` per chunk, `\r\n]` at the end).
 * Google indents each element; llm-route writes them compact: the same JSON array.
 */
export interface GeminiFrames {
  /** One chunk (a GenerateContentResponse, as JSON text). */
  chunk(json: string): string;
  /** What ends a stream that finished well. */
  end(): string;
  /** The error object as the stream's last chunk (Gemini's stream has no error event): nothing may follow. */
  error(json: string): string;
  /** Goes on with a stream whose first chunks went out before (relayed): the array is open. */
  continueOpened(): void;
}

export class SseFrames implements GeminiFrames {
  chunk(json: string): string {
    return `data: ${json}\r\n\r\n`;
  }

  end(): string {
    return '';
  }

  error(json: string): string {
    return this.chunk(json);
  }

  continueOpened(): void {}
}

export class ArrayFrames implements GeminiFrames {
  private opened = false;

  chunk(json: string): string {
    const head = this.opened ? '\r\n,\r\n' : '[';
    this.opened = true;
    return `${head}${json}`;
  }

  end(): string {
    return this.opened ? '\r\n]' : '[]';
  }

  error(json: string): string {
    return `${this.chunk(json)}\r\n]`;
  }

  continueOpened(): void {
    this.opened = true;
  }
}

/** Content type of the array form (the SSE form's is the codec's). */
export const JSON_TYPE = 'application/json; charset=utf-8';
