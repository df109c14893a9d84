/**
 * Incremental SSE parser that keeps each event's original bytes.
 *
 * The relay forwards `raw` unchanged (no re-serialisation); only `data` is decoded, because
 * the commit point and usage accounting need it. Lines may end in LF, CRLF or CR; an event
 * ends at a blank line; comment lines (":...") are kept in `raw` but add no data.
 *
 * Each byte is scanned once: a partial event is held as the chunks it came in (no copy), with
 * its complete lines already read, so a huge event fed in small chunks costs linear time. The
 * held chunks are joined once, when the event completes; a line cut between chunks is decoded
 * from that joined copy.
 */
export type SseEventHandler = (raw: Buffer, data: string | null) => void;

const EVENT_END = Buffer.from('\n\n');
const LF = 10;
const CR = 13;
const COLON = 58;
const SPACE = 32;
// "data" as bytes, checked without decoding the line.
const D = 100,
  A = 97,
  T = 116;

/** What a CR at the very end of the bytes so far ended: it may be the first half of a CRLF. */
const TrailingCr = {
  None: 0,
  /** A field line, already parsed; an LF that follows belongs to it. */
  Line: 1,
  /** The blank line that ends the event; the event goes out once the next byte is known. */
  Blank: 2,
} as const;
type TrailingCr = (typeof TrailingCr)[keyof typeof TrailingCr];

export class SseParser {
  /** Bytes of the incomplete event, as slices of the chunks they came in. */
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** Where in the held bytes the incomplete last line starts, or -1. */
  private openLine = -1;
  /** Data of the incomplete event's complete lines. */
  private data: string | null = null;
  /**
   * Start and end, in the event's bytes, of lines read only once the event is joined: a line
   * cut between chunks, and every data line after it (to keep their order).
   */
  private lateLines: number[] = [];
  private trailingCr: TrailingCr = TrailingCr.None;

  /**
   * Parses `chunk` and calls `onEvent` once per complete event, in order.
   * Returns true when the chunk was consumed exactly at event boundaries with nothing carried
   * over before or after it, so a caller that keeps every event may forward `chunk` itself.
   */
  push(chunk: Buffer, onEvent: SseEventHandler): boolean {
    const hadHeld = this.heldBytes > 0;
    const len = chunk.length;
    let pos = 0;
    let eventStart = 0;
    if (this.trailingCr !== TrailingCr.None && len > 0) {
      pos = chunk[0] === LF ? 1 : 0;
      if (this.trailingCr === TrailingCr.Blank) {
        this.emit(chunk, 0, pos, onEvent);
        eventStart = pos;
      }
      this.trailingCr = TrailingCr.None;
    }
    let lineStart = pos;
    // Next LF and CR at or after `pos`, each searched again only once passed: linear per chunk.
    let nextLF = chunk.indexOf(LF, pos);
    let nextCR = chunk.indexOf(CR, pos);
    while (pos < len) {
      if (nextLF !== -1 && nextLF < pos) nextLF = chunk.indexOf(LF, pos);
      if (nextCR !== -1 && nextCR < pos) nextCR = chunk.indexOf(CR, pos);
      let lineEnd: number;
      let next: number;
      let crAtEnd = false;
      if (nextCR !== -1 && (nextLF === -1 || nextCR < nextLF)) {
        lineEnd = nextCR;
        if (lineEnd + 1 < len) next = chunk[lineEnd + 1] === LF ? lineEnd + 2 : lineEnd + 1;
        else {
          next = len;
          crAtEnd = true;
        }
      } else if (nextLF !== -1) {
        lineEnd = nextLF;
        next = lineEnd + 1;
      } else {
        break; // the line goes on in the next chunk
      }
      if (lineEnd === lineStart && this.openLine < 0) {
        // Blank line: the event is complete.
        if (crAtEnd) this.trailingCr = TrailingCr.Blank;
        else {
          this.emit(chunk, eventStart, next, onEvent);
          eventStart = next;
        }
      } else {
        this.readLine(chunk, lineStart, lineEnd);
        if (crAtEnd) this.trailingCr = TrailingCr.Line;
      }
      pos = lineStart = next;
    }
    if (eventStart < len) {
      if (lineStart < len && this.openLine < 0) this.openLine = this.heldBytes + lineStart - eventStart;
      this.held.push(eventStart === 0 ? chunk : chunk.subarray(eventStart));
      this.heldBytes += len - eventStart;
    }
    return !hadHeld && this.heldBytes === 0;
  }

  /**
   * At the end of the stream: emits what is left as a last event when it carries data (some
   * servers omit the final blank line; the event's bytes then get one), and reports whether
   * anything was left at all.
   */
  flush(onEvent: SseEventHandler): boolean {
    if (this.heldBytes === 0) return false;
    const rest = Buffer.concat(this.held, this.heldBytes);
    const trailingCr = this.trailingCr;
    // At the end of the stream, the end of the bytes ends the line.
    if (this.openLine >= 0) this.lateLines.push(this.openLine, this.heldBytes);
    const data = this.dataOf(rest);
    this.reset();
    if (isBlank(rest)) return false;
    if (trailingCr === TrailingCr.Blank) onEvent(rest, data);
    // Terminated here so that a relayed copy is a complete event for the client.
    else if (data !== null) onEvent(Buffer.concat([rest, EVENT_END]), data);
    return true;
  }

  /** Bytes held back waiting for the end of an event. */
  get pendingBytes(): number {
    return this.heldBytes;
  }

  /** Sends the held event completed by `chunk[from, to)`. */
  private emit(chunk: Buffer, from: number, to: number, onEvent: SseEventHandler): void {
    let raw: Buffer;
    if (this.heldBytes === 0) raw = chunk.subarray(from, to);
    else {
      this.held.push(chunk.subarray(from, to));
      raw = Buffer.concat(this.held, this.heldBytes + to - from);
    }
    const data = this.dataOf(raw);
    this.reset();
    onEvent(raw, data);
  }

  /** Reads the line `chunk[start, end)`, or the held line that it ends. */
  private readLine(chunk: Buffer, start: number, end: number): void {
    // With bytes held, the chunk goes on with the held event: its position p is heldBytes + p.
    if (this.openLine >= 0) {
      this.lateLines.push(this.openLine, this.heldBytes + end);
      this.openLine = -1;
    } else if (!isDataField(chunk, start, end)) return;
    else if (this.lateLines.length > 0) this.lateLines.push(this.heldBytes + start, this.heldBytes + end);
    else this.data = withValue(this.data, chunk, start, end);
  }

  /** The data of the event whose bytes are `raw`, with its late lines read from them. */
  private dataOf(raw: Buffer): string | null {
    let data = this.data;
    const late = this.lateLines;
    for (let i = 0; i < late.length; i += 2) {
      if (isDataField(raw, late[i], late[i + 1])) data = withValue(data, raw, late[i], late[i + 1]);
    }
    return data;
  }

  private reset(): void {
    this.held = [];
    this.heldBytes = 0;
    this.openLine = -1;
    this.data = null;
    this.lateLines = [];
    this.trailingCr = TrailingCr.None;
  }
}

/** `data` with the value of the data line `buf[start, end)` appended. */
function withValue(data: string | null, buf: Buffer, start: number, end: number): string {
  let valueStart = start + 4;
  if (valueStart < end && buf[valueStart] === COLON) valueStart++;
  if (valueStart < end && buf[valueStart] === SPACE) valueStart++;
  const value = buf.toString('utf8', valueStart, end);
  return data === null ? value : `${data}\n${value}`;
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

/** The data of one whole event's bytes (as a framer handed them out), decoded as the parser does; null when it has none. */
export function eventData(raw: Buffer): string | null {
  let data: string | null = null;
  let start = 0;
  while (start < raw.length) {
    let end = start;
    while (end < raw.length && raw[end] !== LF && raw[end] !== CR) end++;
    if (isDataField(raw, start, end)) data = withValue(data, raw, start, end);
    start = end + (raw[end] === CR && raw[end + 1] === LF ? 2 : 1);
  }
  return data;
}
