// Runs inside `unshare -n` (a network namespace with only loopback, brought up by the caller):
// listens on each ADDR:PORT given and pipes every connection to the unix socket
// SOCKDIR/ADDR_PORT.sock, which test/helpers/chromium.ts serves from the test's own network
// namespace. Then runs the command after `--` (Chromium) and exits with it. Plain JS: it runs
// under node without the test's TypeScript loader.
import { spawn } from 'node:child_process';
import { createConnection, createServer } from 'node:net';
import { join } from 'node:path';

const split = process.argv.indexOf('--');
const [sockDir, ...targets] = process.argv.slice(2, split);
const command = process.argv.slice(split + 1);

await Promise.all(
  targets.map(
    (target) =>
      new Promise((resolve, reject) => {
        const [host, port] = target.split(':');
        const server = createServer((inside) => {
          const outside = createConnection(join(sockDir, `${host}_${port}.sock`));
          inside.pipe(outside).pipe(inside);
          inside.on('error', () => outside.destroy());
          outside.on('error', () => inside.destroy());
        });
        server.once('error', reject);
        server.listen(Number(port), host, resolve);
      }),
  ),
);

const child = spawn(command[0], command.slice(1), { stdio: ['ignore', 'inherit', 'inherit'] });
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => child.kill('SIGKILL'));
