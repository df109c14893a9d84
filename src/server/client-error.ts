import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { expireRequest } from '../http/request-deadline.js';
import type { ErrorSpec } from '../protocols/core/types.js';
import { codecForPath } from './path-protocol.js';

/** How long a socket answered with an error may stay half-closed, reading what the client still sends, before it is destroyed. */
const LINGER_MS = 2_000;

/** Sockets already answered: Node's parser reports every later chunk of a broken request again. */
const answered = new WeakSet<Socket>();

/**
 * Node's `clientError`: a request it could not parse or that ran out of time. A body reader
 * waiting on the socket answers a timeout itself (in its endpoint's protocol); otherwise the
 * answer is written here, in the protocol of the request line's path when the bytes show it,
 * and the socket is closed after a short linger (a reset would lose the answer).
 */
export function answerClientError(err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket): void {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' && expireRequest(socket)) return;
  if (answered.has(socket)) return;
  answered.add(socket);
  // A response already under way on this socket (the error is a pipelined request's): no bytes may be added to it.
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (!socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const error = errorFor(err.code);
  const body = codecForPath(requestPath(err.rawPacket)).errorBody(error);
  socket.end(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\nconnection: close\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

function errorFor(code: string | undefined): ErrorSpec {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, kind: 'invalid_request', code: 'headers_too_large', message: 'request headers are larger than server.max_header_bytes' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, kind: 'invalid_request', code: 'request_timeout', message: 'the request did not arrive within server.request_timeout_ms' };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, kind: 'invalid_request', code: 'chunk_extensions_too_large', message: 'chunk extensions are too large' };
    default:
      return { status: 400, kind: 'invalid_request', code: 'bad_http_request', message: `malformed HTTP request${code ? ` (${code})` : ''}` };
  }
}

const REQUEST_LINE = /^[A-Z]{3,10} (\/[^ ?\r\n]*)/;

/** The path of the request line at the start of the bytes Node could not parse; '' when they do not start with one. */
function requestPath(raw: Buffer | undefined): string {
  if (!raw) return '';
  return REQUEST_LINE.exec(raw.toString('latin1', 0, Math.min(raw.length, 512)))?.[1] ?? '';
}
