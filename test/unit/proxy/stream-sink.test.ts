import { once } from 'node:events';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ResponseSink } from '../../../src/proxy/stream-sink.js';

/** ResponseSink, the client's response as a committed stream's sink, on a real node:http server and socket. */

const servers: Array<ReturnType<typeof createServer>> = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

describe('ResponseSink.sendNow', () => {
  it("puts a write on the wire in the same turn (node:http alone holds it corked until the next tick), and the client's bytes are unchanged", async () => {
    const corked: Array<{ afterWrite: number; afterSendNow: number }> = [];
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const sink = new ResponseSink(res, null);
      sink.write(Buffer.from('data: first\n\n'));
      const afterWrite = res.socket?.writableCorked ?? -1;
      sink.sendNow();
      corked.push({ afterWrite, afterSendNow: res.socket?.writableCorked ?? -1 });
      // A later write in the same turn is corked again by node:http and leaves on its own next tick.
      sink.write(Buffer.from('data: second\n\n'));
      setTimeout(() => sink.end(Buffer.from('data: [DONE]\n\n')), 5);
    });
    servers.push(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const body = await new Promise<string>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/' }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (piece: string) => (text += piece));
        res.on('end', () => resolve(text));
      });
      req.on('error', reject);
      req.end();
    });
    expect(corked).toEqual([{ afterWrite: 1, afterSendNow: 0 }]);
    expect(body).toBe('data: first\n\ndata: second\n\ndata: [DONE]\n\n');
  });

  it('does nothing once the client is gone (no socket)', () => {
    const res = { socket: null, write: () => true } as unknown as ConstructorParameters<typeof ResponseSink>[0];
    expect(() => new ResponseSink(res, null).sendNow()).not.toThrow();
  });
});
