/**
 * Incremental SSE parser that keeps each event's original bytes.
 *
 * The relay forwards `raw` unchanged (no re-serialisation); only `data` is decoded, because
 * the commit point and usage accounting need it. Lines may end in LF, CRLF or CR; an event
 * ends at a blank line; comment lines (":...") are kept in `raw` but add no data.
 */
export type SseEventHandler = (raw: Buffer, data: string | null) => void;

const EVENT_END = Buffer.from('\n\n');
const LF = 10;
const CR = 13;
const COLON = 58;
const SPACE = 32;
// "data" as bytes, checked without decoding the line.
const D = 100, A = 97, T = 116;

export class SseParser {
  private rest: Buffer | null = null;

  /**
   * Parses `chunk` and calls `onEvent` once per complete event, in order.
   * Returns true when the chunk was consumed exactly at event boundaries with nothing carried
   * over before or after it, so a caller that keeps every event may forward `chunk` itself.
   */
  push(chunk: Buffer, onEvent: SseEventHandler): boolean {
    const hadRest = this.rest !== null;
    const buf = hadRest ? Buffer.concat([this.rest as Buffer, chunk]) : chunk;
    const consumed = this.scan(buf, onEvent, false);
    this.rest = consumed < buf.length ? buf.subarray(consumed) : null;
    return !hadRest && this.rest === null;
  }

  /**
   * At the end of the stream: emits what is left as a last event when it carries data (some
   * servers omit the final blank line; the event's bytes then get one), and reports whether
   * anything was left at all.
   */
  flush(onEvent: SseEventHandler): boolean {
    const rest = this.rest;
    this.rest = null;
    if (rest === null || isBlank(rest)) return false;
    this.scan(rest, onEvent, true);
    return true;
  }

  /** Bytes held back waiting for the end of an event. */
  get pendingBytes(): number {
    return this.rest === null ? 0 : this.rest.length;
  }

  private scan(buf: Buffer, onEvent: SseEventHandler, final: boolean): number {
    const len = buf.length;
    let pos = 0;
    let eventStart = 0;
    let data: string | null = null;
    // Cached position of the next CR: most streams have none, so this is searched once.
    let nextCR = buf.indexOf(CR);
    while (pos < len) {
      let lineEnd = buf.indexOf(LF, pos);
      if (nextCR !== -1 && nextCR < pos) nextCR = buf.indexOf(CR, pos);
      let next: number;
      if (nextCR !== -1 && (lineEnd === -1 || nextCR < lineEnd)) {
        lineEnd = nextCR;
        if (lineEnd + 1 < len) next = buf[lineEnd + 1] === LF ? lineEnd + 2 : lineEnd + 1;
        else if (final) next = lineEnd + 1;
        else break; // a CR at the very end may be the first half of a CRLF
      } else if (lineEnd === -1) {
        if (!final) break;
        lineEnd = len; // at the end of the stream, the end of the bytes ends the line
        next = len;
      } else {
        next = lineEnd + 1;
      }
      if (lineEnd === pos) {
        // Blank line: the event is complete.
        onEvent(buf.subarray(eventStart, next), data);
        data = null;
        eventStart = next;
      } else if (isDataField(buf, pos, lineEnd)) {
        let valueStart = pos + 4;
        if (valueStart < lineEnd && buf[valueStart] === COLON) valueStart++;
        if (valueStart < lineEnd && buf[valueStart] === SPACE) valueStart++;
        const value = buf.toString('utf8', valueStart, lineEnd);
        data = data === null ? value : data + '\n' + value;
      }
      pos = next;
    }
    if (final && eventStart < len && data !== null) {
      // Terminated here so that a relayed copy is a complete event for the client.
      onEvent(Buffer.concat([buf.subarray(eventStart), EVENT_END]), data);
      eventStart = len;
    }
    return eventStart;
  }
}

function isDataField(buf: Buffer, start: number, end: number): boolean {
  if (end - start < 4) return false;
  if (buf[start] !== D || buf[start + 1] !== A || buf[start + 2] !== T || buf[start + 3] !== A) return false;
  return end === start + 4 || buf[start + 4] === COLON;
}

function isBlank(buf: Buffer): boolean {
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    if (c !== LF && c !== CR && c !== SPACE) return false;
  }
  return true;
}
