// Reference only: the least a router must do. A node:http server that reads each request's JSON
// body, parses it, sets the model, serialises it again and forwards it to one upstream through an
// undici Pool, then pipes the answer back. No routing, failover, logging or metrics. llm-route's
// CPU per request is measured against this one (the goal: at most 1.3×).
// Usage: node json-pipe.mjs UPSTREAM_BASE_URL MODEL   (e.g. http://127.0.0.1:PORT/v1 m)
import { createServer } from 'node:http';
import { Pool } from 'undici';
import { badGateway, listenAndStop } from './pipe-server.mjs';

const upstream = new URL(process.argv[2]);
const model = process.argv[3] ?? 'm';
const pool = new Pool(upstream.origin, { pipelining: 1, keepAliveTimeout: 30_000, headersTimeout: 0, bodyTimeout: 0 });
const prefix = upstream.pathname.replace(/\/v1\/?$/, '');
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding']);

const server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 0 }, (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let payload;
    try {
      payload = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' });
      return res.end('{"error":{"message":"invalid JSON"}}');
    }
    payload.model = model;
    const body = JSON.stringify(payload);
    pool
      .request({
        method: 'POST',
        path: prefix + req.url,
        headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
        body,
      })
      .then(({ statusCode, headers, body: answer }) => {
        const out = {};
        for (const [k, v] of Object.entries(headers)) if (!HOP.has(k)) out[k] = v;
        res.writeHead(statusCode, out);
        answer.pipe(res);
        res.on('close', () => answer.destroy());
      })
      .catch((err) => badGateway(res, err));
  });
});

listenAndStop(server, pool, 'json pipe');
