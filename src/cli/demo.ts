import { fileURLToPath } from 'node:url';
import { loadConfig } from '../config/load.js';
import { type MockProcess, startMockProcess } from '../demo/mock-process.js';
import { startTraffic } from '../demo/traffic.js';
import { ProxyServer } from '../proxy/server.js';

export interface DemoOptions {
  port?: number;
}

const DEMO_FILE = fileURLToPath(new URL('../../examples/demo.yaml', import.meta.url));
const LOCAL_ARGS = ['--name', 'local', '--ttft-ms', '200:3000', '--stall-rate', '0.08', '--fail-rate', '0.05', '--tokens-per-s', '40', '--tokens', '30'];
const CLOUD_ARGS = ['--name', 'cloud', '--ttft-ms', '250:600', '--tokens-per-s', '80', '--tokens', '30'];
/** The local tier goes away for OUTAGE_MS every CYCLE_MS, so failover and recovery show up. */
const CYCLE_MS = 30_000;
const OUTAGE_MS = 8_000;

/** `llm-route demo`: two mock upstreams, the proxy, and light traffic, until Ctrl-C. */
export async function runDemo(opts: DemoOptions): Promise<number> {
  let local: MockProcess | null = await startMockProcess([...LOCAL_ARGS, '--port', '0']);
  const localPort = local.port;
  const cloud = await startMockProcess([...CLOUD_ARGS, '--port', '0']);
  const config = loadConfig(DEMO_FILE, { ...process.env, DEMO_LOCAL_URL: local.url, DEMO_CLOUD_URL: cloud.url });
  const server = new ProxyServer({ config, port: opts.port ?? config.server.port, log: process.stdout });
  const { url } = await server.listen();
  process.stderr.write(`llm-route demo: proxy on ${url}/v1 (route "chat": local → cloud). Ctrl-C to stop.\n`);
  const stopTraffic = startTraffic(`${url}/v1`, 700, ['hi', 'tell me a joke', 'summarise this', 'what is TTFT?']);

  // The outage loop: stop the local mock, then bring it back on the same port.
  let stopping = false;
  const outage = setInterval(() => {
    void (async () => {
      if (stopping || !local) return;
      const down = local;
      local = null;
      await down.stop();
      await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
      if (!stopping) local = await startMockProcess([...LOCAL_ARGS, '--port', String(localPort)]).catch(() => null);
    })();
  }, CYCLE_MS);

  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  stopping = true;
  clearInterval(outage);
  await stopTraffic();
  await server.close(1_000);
  await Promise.all([local?.stop(), cloud.stop()]);
  return 0;
}
