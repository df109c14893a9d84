import { execa } from 'execa';
import { constants } from 'node:os';
import { isatty } from 'node:tty';
import { ConfigError } from '../config/errors.js';
import { loadConfig, resolveConfigPath } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { startProviders, type StartedProviders } from '../launch/start-provider.js';
import { clientSetup, type ClientSetup, isCodex } from './exec-env.js';
import { settingsNotice, writeRunSettings } from './exec-gemini.js';
import { traceExport } from '../config/trace-export.js';
import { announceTiers, exitSummary, RunWatch } from './exec-report.js';
import { withStatusLine } from './exec-statusline.js';
import { ProxyServer } from '../server/server.js';
import { allTiers } from '../config/all-tiers.js';
import { refreshFit } from '../fit/refresh-fit.js';
import { createStaleAwareAgent } from '../util/stale-socket-pool.js';
import { listenProblem } from '../util/listen-problem.js';
import { keepWasmOnBaselineTier } from '../runtime/wasm-baseline-tier.js';
import type { Agent } from 'undici';
import type { ProviderOutput } from '../telemetry/events.js';

export interface ExecOptions {
  config?: string;
  port?: number;
  /** The route every client in the command uses, whatever model it asks for. */
  route?: string;
  /** The JSON-lines request log and every line of provider output, as JSON lines on stderr. */
  log?: boolean;
  /** The command's own traces joined to llm-route's (Claude Code's traces beta, its traceparent to llm-route). */
  trace?: boolean;
}

const CLOSE_GRACE_MS = 2_000;
const EXEC_HOST = '127.0.0.1';
const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
type ForwardedSignal = (typeof FORWARDED_SIGNALS)[number];

/**
 * `llm-route exec -- <command> [args...]`: a private proxy on a free loopback port for the
 * lifetime of one command, which finds it through OPENAI_BASE_URL, ANTHROPIC_BASE_URL, and
 * (for codex) a provider of its own given as `-c` overrides. Exits with the command's
 * exit code (128+n when a signal ended it). The command owns stdout; llm-route writes only
 * to stderr.
 */
export async function runExec(command: string[], opts: ExecOptions): Promise<number> {
  keepWasmOnBaselineTier();
  let config: Config;
  try {
    config = loadConfig(resolveConfigPath(opts.config));
  } catch (err) {
    process.stderr.write(err instanceof ConfigError ? `${err.format()}\n` : `llm-route exec: ${(err as Error).message}\n`);
    return 2;
  }

  const traced = opts.trace ? traceExport(config) : null;
  if (opts.trace && (!traced || 'problem' in traced)) {
    const why = traced && 'problem' in traced ? traced.problem : 'traces are off: set telemetry.otlp in the tier file, or OTEL_EXPORTER_OTLP_ENDPOINT';
    process.stderr.write(`llm-route exec: --trace joins the command's traces to llm-route's, but ${why}\n`);
    return 2;
  }
  const trace = traced && !('problem' in traced) ? traced : undefined;

  const signals = new SignalRelay();
  let providers: StartedProviders | undefined;
  let server: ProxyServer | undefined;
  let discovery: Agent | undefined;
  // Set once the command runs: the exit summary covers its usage rows from `since` on.
  let run: { since: number; watch: RunWatch } | undefined;
  // Gemini CLI's settings for this run only (exec-gemini.ts), removed when it ends.
  let removeSettings: (() => void) | undefined;
  try {
    // The port first, like serve: a busy port starts no provider, and says so in serve's words.
    // Loopback only: the proxy exists for this one local command.
    server = new ProxyServer({ config, host: EXEC_HOST, port: opts.port ?? 0, log: opts.log ? process.stderr : undefined });
    let url: string;
    try {
      url = (await server.listen()).url;
    } catch (err) {
      process.stderr.write(`llm-route exec: ${listenProblem(err, EXEC_HOST, opts.port ?? 0)}\n`);
      return 1;
    }
    server.settleWhenQuiet();

    // Provider output is shown while it starts (progress, the reason it fails); once it
    // serves, its request logs would interleave with the command's own output: --log only.
    let starting = true;
    const showOutput = (event: ProviderOutput): void => {
      if (opts.log) writeLogLine({ event: event.type, provider: event.provider, stream: event.stream, line: event.line });
      else if (event.stream === 'status' || starting) writeProviderLine(event);
    };
    providers = await startProviders(config, { onOutput: showOutput, signal: signals.abortSignal });
    starting = false;

    if (signals.received) return 128 + constants.signals[signals.received];
    if (opts.log) writeLogLine({ event: 'listening', url: `${url}/v1`, config: config.file, command });
    // No health checks here, but the tiers' windows are still learned (route by fit), in the
    // background; Codex waits for them (each within its provider's health timeout): its
    // `model_context_window` is the route's window (exec-env.ts).
    discovery = createStaleAwareAgent();
    const { telemetry } = server.app;
    const discovering = allTiers(config).map((tier) => refreshFit(tier, telemetry, { dispatcher: discovery }));
    if (isCodex(command[0])) await Promise.all(discovering);
    // warm: true tiers load their models now, while the command starts.
    if (allTiers(config).some((tier) => tier.warm)) void import('../health/warm-models.js').then((warm) => warm.warmTiers(config, discovery));

    if (opts.route !== undefined && !config.routes.has(opts.route)) {
      process.stderr.write(`llm-route exec: unknown route "${opts.route}" (known: ${[...config.routes.keys()].join(', ')})\n`);
      return 2;
    }
    // Before the command has the screen: a tier that cannot answer, and where its requests go.
    await announceTiers(server, { log: opts.log === true, dispatcher: discovery, signal: signals.abortSignal });
    if (signals.received) return 128 + constants.signals[signals.received];
    const setup = clientSetup(url, config, command, opts.route, trace);
    const statusLine = withStatusLine(setup.command, url);
    if (statusLine.note) process.stderr.write(`${statusLine.note}\n`);
    if (setup.geminiRoute !== undefined) {
      const settings = writeRunSettings(setup.geminiRoute);
      if ('problem' in settings) process.stderr.write(`${settingsNotice(settings.problem)}\n`);
      else {
        removeSettings = settings.remove;
        setup.env.GEMINI_CLI_SYSTEM_SETTINGS_PATH = settings.path;
      }
    }
    run = { since: Date.now(), watch: new RunWatch(telemetry) };
    return await runCommand(statusLine.command, childEnv(setup), signals);
  } catch (err) {
    if (signals.received) return 128 + constants.signals[signals.received];
    process.stderr.write(`llm-route exec: ${(err as Error).message}\n`);
    return 1;
  } finally {
    // Signals arriving now are still caught: this cleanup is what keeps the providers from
    // outliving llm-route, so it must not be cut short.
    await server?.close(CLOSE_GRACE_MS).catch(() => undefined);
    await discovery?.destroy().catch(() => undefined); // its sockets must not hold the process open
    await providers?.stopAll();
    removeSettings?.();
    signals.dispose();
    // Once the server has closed, every row of the run is in the usage log.
    if (run && server) {
      run.watch.stop();
      const window = { run: server.usage.run, since: run.since, until: Date.now() };
      const { lines, summary } = exitSummary(config, window, run.watch);
      if (opts.log) {
        const numbers = summary && { usage: summary.report, fallback_reasons: summary.fallbackReasons, tool_calls_recovered: summary.toolCallsRecovered };
        writeLogLine({ event: 'exit_summary', run: window.run, ...numbers, state_changes: run.watch.changes.map((c) => c.event) });
      } else for (const line of lines) process.stderr.write(`${line}\n`);
    }
  }
}

/** Runs the command on llm-route's terminal; its exit code, or 128+n when signal n ended it. */
async function runCommand(command: string[], env: Record<string, string>, signals: SignalRelay): Promise<number> {
  const child = execa(command[0], command.slice(1), {
    stdio: 'inherit',
    env,
    extendEnv: false,
    reject: false,
    // A forwarded SIGTERM is the command's to handle in its own time.
    forceKillAfterDelay: false,
  });
  signals.forwardTo((signal) => child.kill(signal));
  const result = await child;
  if (result.signal) return 128 + constants.signals[result.signal];
  if (result.exitCode !== undefined) return result.exitCode;
  // It never ran; exit like a shell would.
  process.stderr.write(`llm-route exec: cannot run ${command[0]}: ${result.originalMessage ?? result.shortMessage}\n`);
  return result.code === 'ENOENT' ? 127 : 126;
}

/** The inherited environment with the client setup on top (and what it unsets taken out). */
function childEnv(setup: ClientSetup): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !setup.unset.includes(name)) env[name] = value;
  return { ...env, ...setup.env };
}

/**
 * Catches SIGINT, SIGTERM and SIGHUP for the whole run so llm-route always cleans up: while
 * providers start, a signal aborts the start; while the command runs, it is passed on.
 */
class SignalRelay {
  received: ForwardedSignal | undefined;
  private readonly abort = new AbortController();
  private forward: ((signal: ForwardedSignal) => void) | undefined;
  private readonly handlers = new Map<ForwardedSignal, () => void>();

  constructor() {
    for (const signal of FORWARDED_SIGNALS) {
      const handler = (): void => this.onSignal(signal);
      this.handlers.set(signal, handler);
      process.on(signal, handler);
    }
  }

  get abortSignal(): AbortSignal {
    return this.abort.signal;
  }

  forwardTo(forward: (signal: ForwardedSignal) => void): void {
    this.forward = forward;
  }

  dispose(): void {
    for (const [signal, handler] of this.handlers) process.off(signal, handler);
  }

  private onSignal(signal: ForwardedSignal): void {
    this.received ??= signal;
    if (!this.forward) {
      this.abort.abort(new Error(`stopped by ${signal}`));
      return;
    }
    // A Ctrl-C on a terminal already reached the command: it runs in llm-route's foreground
    // process group. Passing it on too would interrupt the command twice.
    // (isatty, not process.stdin.isTTY: creating process.stdin would put the shared terminal
    // into non-blocking mode under the command's feet.)
    if (signal === 'SIGINT' && isatty(0)) return;
    this.forward(signal);
  }
}

/** `[provider] line`, on every line of a multi-line message. */
function writeProviderLine(event: ProviderOutput): void {
  const prefix = `[${event.provider}] `;
  process.stderr.write(`${prefix}${event.line.split('\n').join(`\n${prefix}`)}\n`);
}

function writeLogLine(value: Record<string, unknown>): void {
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), ...value })}\n`);
}
