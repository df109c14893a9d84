// What the two reference pipes (naive-pipe.mjs, json-pipe.mjs) share around their request
// handling: the 502 for an upstream that failed, the `listening on URL` line the benchmark waits
// for, and a clean stop on SIGINT / SIGTERM.

/** Answers a failed upstream call with a 502 carrying its message. */
export function badGateway(res, err) {
  res.writeHead(502, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message: err.message } }));
}

/** Listens on a free loopback port, prints `NAME listening on URL/v1`, and stops server and pool on a signal. */
export function listenAndStop(server, pool, name) {
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`${name} listening on http://127.0.0.1:${server.address().port}/v1\n`);
  });
  const stop = () => {
    server.close();
    server.closeAllConnections();
    void pool.destroy();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
