import type { Config, Provider } from '../config/schema.js';
import type { ProviderOutput } from '../telemetry/events.js';
import { checkReadiness, describeReadiness, type Readiness } from '../health/readiness.js';
import { describeExit, LoadingReport, type OutputTail, relayOutput } from './command-output.js';
import { spawnGroup, type GroupProcess } from './process-group.js';

/**
 * Local tiers that start themselves: a provider with `start:` that does not answer gets its
 * command run, and llm-route waits until it can serve (see readiness.ts: a server that answers
 * 503 while it loads its model is not ready yet) before it sends it requests.
 */

export type OutputStream = ProviderOutput['stream'];

export interface StartedProvider {
  /** The start command's pid, also the id of the process group holding everything it started. */
  pid: number;
  /** Stops the command and everything it started. Idempotent; resolves once they have exited. */
  stop(): Promise<void>;
}

export interface EnsureStartedOptions {
  /** Whether the provider can serve now (see checkReadiness). */
  readiness: () => Promise<Readiness>;
  /** The command's output line by line, and llm-route's own `status` lines about it. */
  onOutput: (stream: OutputStream, line: string) => void;
  /** Aborting stops a command that is still starting; the call then rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** A start command that failed: it exited, or the provider did not answer in time. */
export class ProviderStartError extends Error {
  constructor(
    readonly provider: string,
    message: string,
  ) {
    super(message);
    this.name = 'ProviderStartError';
  }
}

const POLL_MS = 250;

/**
 * Runs `provider.start.command` unless the provider already answers, and waits until it does.
 * Returns null when there was nothing to start (no `start:`, or already up).
 */
export async function ensureProviderStarted(provider: Provider, opts: EnsureStartedOptions): Promise<StartedProvider | null> {
  const start = provider.start;
  if (!start) return null;
  opts.signal?.throwIfAborted();
  const now = await opts.readiness();
  if (now.state !== 'down') {
    // Something serves that address already (maybe still loading its model): not ours to start.
    const how = now.state === 'ready' ? 'already answering' : `already answering (${describeReadiness(now)})`;
    opts.onOutput('status', `${how} at ${provider.base_url}; not running \`${start.command}\``);
    return null;
  }
  opts.signal?.throwIfAborted();

  opts.onOutput('status', `not answering at ${provider.base_url}; running \`${start.command}\``);
  const startedAt = Date.now();
  const child = spawnGroup(start.command);
  const tail = relayOutput(child, opts.onOutput);
  let loadingMs: number;
  try {
    loadingMs = await waitUntilReady(provider.name, start, child, tail, opts);
  } catch (err) {
    await child.stop();
    throw err;
  }
  const loading = loadingMs > 0 ? `; it was loading for ${loadingMs} ms of that` : '';
  opts.onOutput('status', `ready after ${Date.now() - startedAt} ms (pid ${child.pid}${loading})`);

  // A launcher that exited 0 before the provider answered (`docker start …`) was expected to go.
  const exitedWhileStarting = child.exitStatus() !== undefined;
  let stopRequested = false;
  void child.exited.then((status) => {
    if (!stopRequested && !exitedWhileStarting) {
      opts.onOutput('status', `\`${start.command}\` ${describeExit(status)} while serving${tail.describe()}`);
    }
  });
  return {
    pid: child.pid,
    stop: () => {
      stopRequested = true;
      return child.stop();
    },
  };
}

/** Resolves once the provider can serve, with how long it answered "loading" before that. */
async function waitUntilReady(
  name: string,
  start: NonNullable<Provider['start']>,
  child: GroupProcess,
  tail: OutputTail,
  opts: EnsureStartedOptions,
): Promise<number> {
  const deadline = Date.now() + start.ready_timeout_ms;
  const loading = new LoadingReport(opts.onOutput);
  let last: Readiness | undefined;
  // The pause between polls ends early when the command exits or the caller aborts.
  let wake: (() => void) | undefined;
  const wakeUp = (): void => wake?.();
  void child.exited.then(wakeUp);
  opts.signal?.addEventListener('abort', wakeUp, { once: true });
  let launcherExitReported = false;
  try {
    for (;;) {
      opts.signal?.throwIfAborted();
      last = await opts.readiness();
      if (last.state === 'ready') return loading.totalMs();
      loading.saw(last);
      opts.signal?.throwIfAborted();

      const status = child.exitStatus();
      if (status && status.code !== 0) {
        throw new ProviderStartError(name, `provider "${name}": \`${start.command}\` ${describeExit(status)} before it became ready${tail.describe()}`);
      }
      if (status && !launcherExitReported) {
        // Exit code 0: a launcher that hands the server to a daemon (`docker start`, `brew services`). Keep waiting for it.
        opts.onOutput('status', `\`${start.command}\` exited with code 0; waiting for the server it started`);
        launcherExitReported = true;
      }

      const left = deadline - Date.now();
      if (left <= 0) {
        const launcherNote = status ? ` (the command itself exited with code 0)` : '';
        const lastWord = last && last.state !== 'down' ? `; last it was ${describeReadiness(last)}` : '';
        throw new ProviderStartError(
          name,
          `provider "${name}" did not become ready within ${start.ready_timeout_ms} ms after \`${start.command}\`${launcherNote}${lastWord}${tail.describe()}`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(POLL_MS, left));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  } finally {
    opts.signal?.removeEventListener('abort', wakeUp);
  }
}

// ─── every provider of a config ─────────────────────────────────────────────

export interface StartProvidersOptions {
  /** Output and status lines of every started provider, as telemetry events. */
  onOutput: (event: ProviderOutput) => void;
  signal?: AbortSignal;
  /** Default: checkReadiness (llama.cpp/vLLM /health, Ollama /api/version, else the model list; 503 is loading). */
  readiness?: (provider: Provider) => Promise<Readiness>;
}

export interface StartedProviders {
  /** The providers llm-route started and now owns, by name. */
  started: ReadonlyMap<string, StartedProvider>;
  /**
   * Providers whose command failed, by name (also reported as a `status` line). Their tiers
   * are simply down: requests fail over as they would for any provider that does not answer.
   */
  failed: ReadonlyMap<string, Error>;
  /** Stops every started provider; idempotent. */
  stopAll(): Promise<void>;
}

/** ensureProviderStarted for every provider with `start:`, all at once. Rejects only when `signal` aborts. */
export async function startProviders(config: Pick<Config, 'providers'>, opts: StartProvidersOptions): Promise<StartedProviders> {
  const readiness = opts.readiness ?? ((provider: Provider) => checkReadiness(provider));
  const providers = [...config.providers.values()].filter((provider) => provider.start);
  const results = await Promise.allSettled(
    providers.map((provider) => {
      const onOutput = (stream: OutputStream, line: string): void => opts.onOutput({ type: 'provider_output', provider: provider.name, stream, line });
      return ensureProviderStarted(provider, { readiness: () => readiness(provider), onOutput, signal: opts.signal }).catch((err: unknown) => {
        const error = err instanceof Error ? err : new Error(String(err));
        if (!opts.signal?.aborted) onOutput('status', `could not start: ${error.message}`);
        throw error;
      });
    }),
  );

  const started = new Map<string, StartedProvider>();
  const failed = new Map<string, Error>();
  results.forEach((result, index) => {
    const { name } = providers[index];
    if (result.status === 'rejected') failed.set(name, result.reason as Error);
    else if (result.value) started.set(name, result.value);
  });
  let stopping: Promise<void> | undefined;
  const stopAll = (): Promise<void> => (stopping ??= Promise.all([...started.values()].map((provider) => provider.stop())).then(() => undefined));

  if (opts.signal?.aborted) {
    await stopAll();
    throw opts.signal.reason;
  }
  return { started, failed, stopAll };
}
