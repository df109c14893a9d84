import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A self-signed certificate made with openssl now, for the given names and IPs; removed by `remove()`. */
export function selfSignedCert(dnsNames: string[], ips: string[]): { certFile: string; cert: string; key: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'llm-route-tls-'));
  const san = [...dnsNames.map((n) => `DNS:${n}`), ...ips.map((ip) => `IP:${ip}`)].join(',');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
      '-days',
      '1',
      '-subj',
      `/CN=${dnsNames[0]}`,
      '-addext',
      `subjectAltName=${san}`,
    ],
    { stdio: 'ignore' },
  );
  return {
    certFile: join(dir, 'cert.pem'),
    cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
    key: readFileSync(join(dir, 'key.pem'), 'utf8'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** An HTTPS server answering every POST with `body` as JSON; counts requests. */
export async function httpsJsonServer(
  tls: { cert: string; key: string },
  body: unknown,
  host = '127.0.0.1',
): Promise<{ port: number; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const server = createHttpsServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    requests.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { port: portOf(server), requests, close: () => closeServer(server) };
}

/**
 * A forward proxy as a company's: CONNECT only (what HTTPS through a proxy is), recorded. Every
 * tunnel ends at `target` on loopback, whatever host was asked for, so nothing leaves the machine.
 */
export async function connectProxy(targetPort: () => number): Promise<{ url: string; connects: string[]; close(): Promise<void> }> {
  const connects: string[] = [];
  const sockets = new Set<Socket>();
  const server = createHttpServer((_req, res) => {
    res.writeHead(405).end('CONNECT only');
  });
  server.on('connect', (req, client: Socket, head: Buffer) => {
    connects.push(req.url ?? '');
    sockets.add(client);
    const upstream = connect(targetPort(), '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    const end = (): void => {
      client.destroy();
      upstream.destroy();
    };
    upstream.on('error', end);
    client.on('error', end);
    client.on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${portOf(server)}`,
    connects,
    close: () => {
      for (const s of sockets) s.destroy();
      return closeServer(server);
    },
  };
}

function portOf(server: Server | ReturnType<typeof createHttpsServer>): number {
  const address = server.address();
  return typeof address === 'object' && address ? address.port : 0;
}

function closeServer(server: { close(cb: () => void): unknown; closeAllConnections?: () => void }): Promise<void> {
  server.closeAllConnections?.();
  return new Promise((resolve) => server.close(() => resolve()));
}

const PROXY_VARIABLES = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy'];

/** The proxy variables as they are now; `restore()` puts every one of them back (unset if it was). */
export function saveProxyEnv(): { restore(): void } {
  const saved = Object.fromEntries(PROXY_VARIABLES.map((k) => [k, process.env[k]]));
  return {
    restore() {
      for (const k of PROXY_VARIABLES) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
    },
  };
}
