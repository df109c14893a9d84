import type { FrameHandler, Framer } from './framer.js';

const LF = 10;
const CR = 13;

/**
 * Newline-delimited JSON (Ollama's native stream): one event per line, LF or CRLF. A partial
 * line is kept as the chunks it came in and joined once its end arrives, so a huge line costs
 * linear time however finely it is split.
 */
export class NdjsonFramer implements Framer {
  private pending: Buffer[] = [];
  private pendingLength = 0;

  push(chunk: Buffer, onEvent: FrameHandler): boolean {
    const hadPending = this.pendingLength > 0;
    let lineEnd = chunk.indexOf(LF);
    if (lineEnd === -1) {
      this.hold(chunk);
      return false;
    }
    let start = 0;
    if (hadPending) {
      this.pending.push(chunk.subarray(0, lineEnd + 1));
      const line = Buffer.concat(this.pending, this.pendingLength + lineEnd + 1);
      this.pending = [];
      this.pendingLength = 0;
      emit(line, onEvent);
      start = lineEnd + 1;
      lineEnd = chunk.indexOf(LF, start);
    }
    while (lineEnd !== -1) {
      emit(chunk.subarray(start, lineEnd + 1), onEvent);
      start = lineEnd + 1;
      lineEnd = chunk.indexOf(LF, start);
    }
    if (start < chunk.length) this.hold(chunk.subarray(start));
    return !hadPending && start === chunk.length;
  }

  flush(onEvent: FrameHandler): boolean {
    if (this.pendingLength === 0) return false;
    const rest = Buffer.concat(this.pending, this.pendingLength);
    this.pending = [];
    this.pendingLength = 0;
    if (text(rest, rest.length) === '') return false;
    // Terminated here, so a relayed copy is a complete line for the client.
    emit(Buffer.concat([rest, Buffer.from('\n')]), onEvent);
    return true;
  }

  get pendingBytes(): number {
    return this.pendingLength;
  }

  private hold(bytes: Buffer): void {
    this.pending.push(bytes);
    this.pendingLength += bytes.length;
  }
}

function emit(line: Buffer, onEvent: FrameHandler): void {
  // The line without its LF (and the CR of a CRLF).
  let end = line.length - 1;
  if (end > 0 && line[end - 1] === CR) end--;
  const data = text(line, end);
  onEvent(line, data === '' ? null : data);
}

function text(line: Buffer, end: number): string {
  return line.toString('utf8', 0, end).trim();
}
