// Reference only: the most naive proxy there is, a node:http server that pipes each request to one
// upstream through an undici Pool and pipes the answer back. No parsing, routing, logging or metrics.
// It shows on this machine, in the same run, what "just a Node hop" costs.
// Usage: node naive-pipe.mjs UPSTREAM_BASE_URL   (e.g. http://127.0.0.1:PORT/v1)
import { createServer } from 'node:http';
import { Pool } from 'undici';
import { badGateway, listenAndStop } from './pipe-server.mjs';

const upstream = new URL(process.argv[2]);
const pool = new Pool(upstream.origin, { pipelining: 1, keepAliveTimeout: 30_000, headersTimeout: 0, bodyTimeout: 0 });
const prefix = upstream.pathname.replace(/\/v1\/?$/, '');

const server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 0 }, (req, res) => {
  pool
    .request({
      method: req.method,
      path: prefix + req.url,
      headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
      body: req,
    })
    .then(({ statusCode, headers, body }) => {
      const out = {};
      for (const [k, v] of Object.entries(headers)) {
        if (k !== 'connection' && k !== 'keep-alive' && k !== 'transfer-encoding') out[k] = v;
      }
      res.writeHead(statusCode, out);
      body.pipe(res);
      res.on('close', () => body.destroy());
    })
    .catch((err) => badGateway(res, err));
});

listenAndStop(server, pool, 'naive pipe');
