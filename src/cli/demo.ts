import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { type MockProcess, startMockProcess } from '../demo/mock-process.js';
import { startOutages } from '../demo/outages.js';
import { startTraffic } from '../demo/traffic.js';
import { ProxyServer } from '../server/server.js';
import { TelemetryBus } from '../telemetry/bus.js';
import { attachRequestLog } from '../telemetry/request-log.js';
import type { DashboardHandle } from '../ui/render-dashboard.js';
import { listenProblem } from '../util/listen-problem.js';
import { showDashboard } from './dashboard.js';

export interface DemoOptions {
  port?: number;
  ui?: boolean;
}

const DEMO_FILE = fileURLToPath(new URL('../../examples/demo.yaml', import.meta.url));
const LOCAL_ARGS = ['--name', 'local', '--ttft-ms', '200:3000', '--stall-rate', '0.08', '--fail-rate', '0.05', '--tokens-per-s', '40', '--tokens', '30'];
const CLOUD_ARGS = ['--name', 'cloud', '--ttft-ms', '250:600', '--tokens-per-s', '80', '--tokens', '30'];

/**
 * `llm-route demo`: two `llm-route mock` child processes (a flaky local tier that also goes
 * away now and then, a steady cloud), the proxy with the live UI, and light traffic, until
 * Ctrl-C or `q`. Nothing is left running afterwards, and nothing written: its usage log (and
 * so the header's totals and incidents) lives in a temporary dir removed at exit, never in the
 * user's state dir, where fake traffic would mix with real spend.
 */
export async function runDemo(opts: DemoOptions): Promise<number> {
  const stateDir = mkdtempSync(join(tmpdir(), 'llm-route-demo-'));
  const removeState = (): void => rmSync(stateDir, { recursive: true, force: true });
  process.once('exit', removeState); // also when the demo dies on an error
  try {
    return await demoIn(stateDir, opts);
  } finally {
    removeState();
  }
}

async function demoIn(stateDir: string, opts: DemoOptions): Promise<number> {
  // Every failure from here on stops the children already started: a child left running
  // would keep the demo alive with no UI to quit it.
  const started: MockProcess[] = [];
  let outages: { stop(): Promise<void> } | undefined;
  try {
    const local = await startMockProcess([...LOCAL_ARGS, '--port', '0']);
    started.push(local);
    const cloud = await startMockProcess([...CLOUD_ARGS, '--port', '0']);
    started.push(cloud);
    // At start and on every reload (`r`, POST /admin/reload): the mocks' URLs, the temporary usage log.
    const readDemoConfig = (file: string): Config => {
      const config = loadConfig(file, { ...process.env, DEMO_LOCAL_URL: local.url, DEMO_CLOUD_URL: cloud.url });
      config.usage.path = join(stateDir, 'usage.db');
      return config;
    };
    const config = readDemoConfig(DEMO_FILE);
    const useUi = opts.ui !== false && process.stdout.isTTY === true && process.stdin.isTTY === true;
    const telemetry = new TelemetryBus();
    if (!useUi) attachRequestLog(telemetry, process.stdout);
    const port = opts.port ?? config.server.port;
    const server = new ProxyServer({ config, port, telemetry, readConfig: readDemoConfig });
    let url: string;
    try {
      url = (await server.listen()).url;
    } catch (err) {
      process.stderr.write(`llm-route demo: ${listenProblem(err, config.server.host, port)}\n`);
      await server.close(0);
      return 1;
    }

    // Listening: whatever happens next, the proxy closes too.
    let ui: DashboardHandle | null = null;
    let stopTraffic: (() => Promise<void>) | undefined;
    try {
      let stop!: (reason: string) => void;
      const stopped = new Promise<string>((resolve) => (stop = resolve));
      process.once('SIGINT', () => stop('SIGINT'));
      process.once('SIGTERM', () => stop('SIGTERM'));
      ui = useUi ? await showDashboard(server, url, stop) : null;
      if (!ui) process.stderr.write(`llm-route demo: proxy on ${url}/v1 (route "chat": local → cloud). Ctrl-C to stop.\n`);

      stopTraffic = startTraffic(`${url}/v1`, 700, ['hi', 'tell me a joke', 'summarise this', 'what is TTFT?']);
      // From here the outage cycle owns the local mock (it stops and restarts it).
      started.splice(started.indexOf(local), 1);
      outages = startOutages(local, [...LOCAL_ARGS, '--port', String(local.port)]);

      await stopped;
      return 0;
    } finally {
      await stopTraffic?.();
      await server.close(1_000);
      ui?.unmount();
    }
  } finally {
    await Promise.all([outages?.stop(), ...started.map((child) => child.stop())]);
  }
}
