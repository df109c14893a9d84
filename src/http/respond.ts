import type { ServerResponse } from 'node:http';

export type HeaderMap = Record<string, string | number>;

/** The OpenAI error shape, for errors llm-route makes itself. */
export function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  type: string,
  code: string,
  extra: Record<string, unknown> = {},
  headers: HeaderMap = {},
): void {
  sendJson(res, status, { error: { message, type, code, ...extra } }, headers);
}

export function sendJson(res: ServerResponse, status: number, value: unknown, headers: HeaderMap = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const body = JSON.stringify(value);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
