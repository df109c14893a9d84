import { allTiers } from '../config/all-tiers.js';
import { ConfigError } from '../config/errors.js';
import { loadConfig, resolveConfigPath } from '../config/load.js';
import type { Config } from '../config/schema.js';
import type { StartedProviders } from '../launch/start-provider.js';
import { ProxyServer } from '../server/server.js';
import { TelemetryBus } from '../telemetry/bus.js';
import { attachRequestLog } from '../telemetry/request-log.js';
import type { DashboardHandle } from '../ui/render-dashboard.js';
import { listenProblem } from '../util/listen-problem.js';
import { keepWasmOnBaselineTier } from '../runtime/wasm-baseline-tier.js';
import { showDashboard } from './dashboard.js';
import { tierNoticeText } from '../health/tier-notice.js';

export interface ServeOptions {
  config?: string;
  host?: string;
  port?: number;
  ui?: boolean;
}

const GRACE_MS = 10_000;

/**
 * `llm-route serve`: binds its port first (a busy port: one line, exit 1, and not a byte sent
 * upstream), then starts local providers that declare `start:`, then the active checks and
 * warm-ups; the live UI on a TTY (JSON lines otherwise). Runs until SIGINT/SIGTERM or `q`;
 * then drains for up to 10 s and stops what it started.
 */
export async function runServe(opts: ServeOptions): Promise<number> {
  keepWasmOnBaselineTier();
  let config: Config;
  try {
    config = loadConfig(resolveConfigPath(opts.config));
  } catch (err) {
    process.stderr.write(`${err instanceof ConfigError ? err.format() : `llm-route serve: ${(err as Error).message}`}\n`);
    return 2;
  }

  const useUi = opts.ui !== false && process.stdout.isTTY === true && process.stdin.isTTY === true;
  const telemetry = new TelemetryBus();
  // With the UI, a provider's start-up output goes to stderr until the UI is there to show it.
  const stopEarlyOutput = useUi
    ? telemetry.subscribe((event) => {
        if (event.type === 'provider_output') process.stderr.write(`[${event.provider}] ${event.line}\n`);
      })
    : attachRequestLog(telemetry, process.stdout);

  let server: ProxyServer;
  try {
    server = new ProxyServer({ config, host: opts.host, port: opts.port, telemetry, watch: true });
  } catch (err) {
    process.stderr.write(`llm-route serve: ${(err as Error).message}\n`);
    return 2;
  }
  let url: string;
  try {
    url = (await server.listen()).url;
  } catch (err) {
    process.stderr.write(`llm-route serve: ${listenProblem(err, opts.host ?? config.server.host, opts.port ?? config.server.port)}\n`);
    await server.close(0);
    return 1;
  }

  server.settleWhenQuiet();
  const stopSignal = waitForStop();
  let ui: DashboardHandle | null = null;
  if (useUi) {
    ui = await showDashboard(server, url, stopSignal.stop);
    stopEarlyOutput();
  } else {
    const routes = [...config.routes.values()].map((r) => ({ route: r.name, tiers: r.tiers.map((t) => t.name) }));
    writeLine({ event: 'listening', url: `${url}/v1`, config: config.file, routes });
  }

  // Until a started provider can serve, its tiers fail over like any tier that does not answer.
  let providers: StartedProviders | null = null;
  try {
    // Loaded only when a provider has `start:` (it brings execa): start-up stays light without.
    if ([...config.providers.values()].some((provider) => provider.start)) {
      const { startProviders } = await import('../launch/start-provider.js');
      providers = await startProviders(config, { onOutput: (event) => telemetry.emit(event), signal: stopSignal.abort.signal });
    }
    // The start-up notice: on stderr without the UI (the UI's log and the JSON log have it as an event).
    const notices = await server.announceUnavailableTiers({ signal: stopSignal.abort.signal });
    if (!useUi) for (const notice of notices) process.stderr.write(`llm-route: ${tierNoticeText(notice)}\n`);
    server.startActiveChecks();
    // warm: true tiers load their models now, in the background (loaded only when a tier asks for it).
    if (allTiers(config).some((tier) => tier.warm)) void import('../health/warm-models.js').then((warm) => warm.warmTiers(config));
  } catch (err) {
    if (!stopSignal.abort.signal.aborted) {
      ui?.unmount();
      process.stderr.write(`llm-route serve: ${(err as Error).message}\n`);
      await server.close(0);
      return 2;
    }
  }

  const reason = await stopSignal.stopped;
  if (!useUi) writeLine({ event: 'shutdown', signal: reason, in_flight: server.app.inFlight.size, grace_ms: GRACE_MS });
  // A second signal while draining stops at once.
  const force = (): void => process.exit(0);
  process.once('SIGINT', force);
  process.once('SIGTERM', force);
  await server.close(GRACE_MS);
  ui?.unmount();
  await providers?.stopAll();
  if (!useUi) writeLine({ event: 'stopped' });
  return 0;
}

/** Resolves on SIGINT/SIGTERM or an explicit stop (the UI's `q`), with what stopped it. */
function waitForStop(): { stopped: Promise<string>; stop: (reason: string) => void; abort: AbortController } {
  const abort = new AbortController();
  let stop!: (reason: string) => void;
  const stopped = new Promise<string>((resolve) => {
    stop = (reason) => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      abort.abort();
      resolve(reason);
    };
  });
  const onSignal = (signal: string): void => stop(signal);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return { stopped, stop, abort };
}

function writeLine(value: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), ...value })}\n`);
}
