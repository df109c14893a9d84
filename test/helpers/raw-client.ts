import { connect } from 'node:net';

export interface RawReply {
  /** Everything the server sent, latin1. */
  text: string;
  /** The status of the first response, 0 when none came. */
  status: number;
  /** The parsed JSON body of the first response, when it had a complete one. */
  json: unknown;
  /** The socket error the client saw (EPIPE, ECONNRESET), null when none. */
  error: string | null;
  /** The server closed the connection (rather than the client giving up at `waitMs`). */
  closedByServer: boolean;
  /** Bytes of `body` written before the end (or the error). */
  sent: number;
  /** performance.now() at the close (or the give-up). */
  endedAt: number;
}

export interface RawRequest {
  /** The request line and headers, without the blank line; '' sends nothing at all. */
  head: string;
  /** Body pieces, written in order with `gapMs` between them (after the head). */
  body?: Array<string | Buffer>;
  gapMs?: number;
  /** Writes the head a byte at a time, `gapMs` apart (a slow client). */
  trickleHead?: boolean;
  /** Give up after this long. */
  waitMs?: number;
}

/** One request on a fresh socket, written the way a test needs (slowly, in pieces, a huge upload). */
export function rawRequest(port: number, request: RawRequest): Promise<RawReply> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    const received: Buffer[] = [];
    let error: string | null = null;
    let sent = 0;
    let finished = false;
    const done = (closedByServer: boolean): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(received).toString('latin1');
      resolve({ text, status: statusOf(text), json: jsonOf(text), error, closedByServer, sent, endedAt: performance.now() });
    };
    const timer = setTimeout(() => done(false), request.waitMs ?? 5000);
    socket.on('data', (d) => received.push(d));
    socket.on('error', (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
    socket.once('close', () => done(true));
    socket.once('connect', async () => {
      const gap = request.gapMs ?? 0;
      const pause = (): Promise<void> => new Promise((r) => setTimeout(r, gap));
      const head = request.head === '' ? '' : `${request.head}\r\n\r\n`;
      if (request.trickleHead) {
        for (const byte of head) {
          if (socket.destroyed) return;
          socket.write(byte);
          await pause();
        }
      } else socket.write(head);
      for (const piece of request.body ?? []) {
        if (socket.destroyed || finished) return;
        if (gap > 0) await pause();
        const flushed = socket.write(piece);
        sent += piece.length;
        if (!flushed) await new Promise((r) => socket.once('drain', r));
      }
    });
  });
}

function statusOf(text: string): number {
  const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
  return m ? Number(m[1]) : 0;
}

function jsonOf(text: string): unknown {
  const split = text.indexOf('\r\n\r\n');
  if (split === -1) return undefined;
  const length = /\r\ncontent-length: (\d+)/i.exec(text.slice(0, split));
  const body = text.slice(split + 4, length ? split + 4 + Number(length[1]) : undefined);
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}
