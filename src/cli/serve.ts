import { ConfigError } from '../config/errors.js';
import { loadConfig, resolveConfigPath } from '../config/load.js';
import { ProxyServer } from '../proxy/server.js';

export interface ServeOptions {
  config?: string;
  host?: string;
  port?: number;
  ui?: boolean;
}

const GRACE_MS = 10_000;

/** `llm-route serve`: runs until SIGINT/SIGTERM, then drains for up to 10 s. */
export async function runServe(opts: ServeOptions): Promise<number> {
  let server: ProxyServer;
  let file: string;
  try {
    file = resolveConfigPath(opts.config);
    const config = loadConfig(file);
    // The live UI arrives with the terminal issue; until then every run logs JSON lines.
    server = new ProxyServer({ config, host: opts.host, port: opts.port, log: process.stdout });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.format()}\n`);
      return 2;
    }
    process.stderr.write(`llm-route serve: ${(err as Error).message}\n`);
    return 2;
  }

  let address: { url: string };
  try {
    address = await server.listen();
  } catch (err) {
    process.stderr.write(`llm-route serve: cannot listen: ${(err as Error).message}\n`);
    return 1;
  }
  const routes = [...server.app.config.routes.values()].map((r) => ({ route: r.name, tiers: r.tiers.map((t) => t.name) }));
  writeLine({ event: 'listening', url: `${address.url}/v1`, config: file, routes });

  await new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      writeLine({ event: 'shutdown', signal, in_flight: server.app.inFlight.size, grace_ms: GRACE_MS });
      // A second signal while draining stops at once.
      const force = (): void => process.exit(0);
      process.once('SIGINT', force);
      process.once('SIGTERM', force);
      void server.close(GRACE_MS).then(resolve, resolve);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  writeLine({ event: 'stopped' });
  return 0;
}

function writeLine(value: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), ...value })}\n`);
}
