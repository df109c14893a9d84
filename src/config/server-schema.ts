import { z } from '#zod';
import { ms } from './duration-schema.js';

// The listening side: address, tokens, body and header limits, timeouts for slow clients, allowed hosts and origins.

export const ServerSchema = z.strictObject({
  host: z.string().min(1).default('127.0.0.1'),
  port: z.number().int().min(0).max(65535).default(4141),
  auth_token: z.string().optional(),
  /** Lets /admin be used from other hosts when presented as a Bearer token. */
  admin_token: z.string().optional(),
  max_body_bytes: z
    .number()
    .int()
    .min(1)
    .default(10 * 1024 * 1024),
  /** The request line and headers of one request (Node's maxHeaderSize): past it, 431. */
  max_header_bytes: z
    .number()
    .int()
    .min(1024)
    .max(1024 * 1024)
    .default(16_384),
  /** Headers and body must have arrived within this (slow clients): else 408 and the socket closed. */
  request_timeout_ms: ms(100).default(30_000),
  /** Streaming requests open at once (routing or committed): past it, 503 with Retry-After. */
  max_streams: z.number().int().min(1).default(1000),
  /** Host names (any port) accepted besides loopback ones when auth_token is unset: a reverse proxy's. */
  allowed_hosts: z
    .array(
      z
        .string()
        .regex(/^[a-z0-9.-]+$|^\[[0-9a-f:.]+\]$/i, 'a host name without port or scheme, like llm.example.com')
        .transform((h) => h.toLowerCase()),
    )
    .default([]),
  /** Web origins whose pages may use llm-route (CORS); a request with any other Origin gets 403. */
  cors_origins: z.array(z.string().transform(webOrigin)).default([]),
});

/**
 * An origin as browsers send it in Origin: `http://localhost:3000` (lower case, no default
 * port, no trailing slash), or an app's own scheme (`app://obsidian.md`, `vscode-webview://…`),
 * kept as written. A URL with a path is not an origin.
 */
function webOrigin(text: string, ctx: z.core.$RefinementCtx): string {
  const bare = text.endsWith('/') ? text.slice(0, -1) : text;
  const parts = /^([a-z][a-z0-9+.-]*):\/\/([^/?#@\s]+)$/i.exec(bare);
  const scheme = parts?.[1].toLowerCase();
  if (parts && scheme !== 'http' && scheme !== 'https') return `${scheme}://${parts[2]}`;
  if (parts && URL.canParse(bare)) return new URL(bare).origin;
  ctx.addIssue({ code: 'custom', message: 'expected a web origin, scheme://host[:port] without a path, like http://localhost:3000' });
  return z.NEVER;
}

export type ServerConfig = z.infer<typeof ServerSchema>;
