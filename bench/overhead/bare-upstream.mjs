// A bare node:http server answering every POST with the same bytes the fast mock sends for a
// non-streaming completion. It is the yardstick for "is the mock the bottleneck?".
// Usage: node bare-upstream.mjs BASE64_BODY
import { createServer } from 'node:http';

const body = Buffer.from(process.argv[2] ?? '', 'base64');
const headers = { 'content-type': 'application/json', 'content-length': body.length };

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, headers);
    res.end(body);
  });
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`bare upstream listening on http://127.0.0.1:${server.address().port}/v1\n`);
});

const stop = () => {
  server.close();
  server.closeAllConnections();
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
