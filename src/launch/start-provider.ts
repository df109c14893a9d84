import { createInterface } from 'node:readline';
import type { Config, Provider } from '../config/schema.js';
import type { ProviderOutput } from '../telemetry/events.js';
import { spawnGroup, type ExitStatus, type GroupProcess } from './process-group.js';
import { isReachable } from './reachable.js';

export { isReachable } from './reachable.js';

/**
 * Local tiers that start themselves: a provider with `start:` that does not answer gets its
 * command run, and llm-route waits until it answers before it sends it requests.
 */

export type OutputStream = ProviderOutput['stream'];

export interface StartedProvider {
  /** The start command's pid, also the id of the process group holding everything it started. */
  pid: number;
  /** Stops the command and everything it started. Idempotent; resolves once they have exited. */
  stop(): Promise<void>;
}

export interface EnsureStartedOptions {
  /** Whether the provider answers now (see isReachable). */
  isUp: () => Promise<boolean>;
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
const TAIL_LINES = 10;
const TAIL_LINE_CHARS = 300;

/**
 * Runs `provider.start.command` unless the provider already answers, and waits until it does.
 * Returns null when there was nothing to start (no `start:`, or already up).
 */
export async function ensureProviderStarted(provider: Provider, opts: EnsureStartedOptions): Promise<StartedProvider | null> {
  const start = provider.start;
  if (!start) return null;
  opts.signal?.throwIfAborted();
  if (await opts.isUp()) {
    opts.onOutput('status', `already answering at ${provider.base_url}; not running \`${start.command}\``);
    return null;
  }
  opts.signal?.throwIfAborted();

  opts.onOutput('status', `not answering at ${provider.base_url}; running \`${start.command}\``);
  const startedAt = Date.now();
  const child = spawnGroup(start.command);
  const tail = relayOutput(child, opts.onOutput);
  try {
    await waitUntilReady(provider.name, start, child, tail, opts);
  } catch (err) {
    await child.stop();
    throw err;
  }
  opts.onOutput('status', `ready after ${Date.now() - startedAt} ms (pid ${child.pid})`);

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

async function waitUntilReady(
  name: string,
  start: NonNullable<Provider['start']>,
  child: GroupProcess,
  tail: OutputTail,
  opts: EnsureStartedOptions,
): Promise<void> {
  const deadline = Date.now() + start.ready_timeout_ms;
  // The pause between polls ends early when the command exits or the caller aborts.
  let wake: (() => void) | undefined;
  const wakeUp = (): void => wake?.();
  void child.exited.then(wakeUp);
  opts.signal?.addEventListener('abort', wakeUp, { once: true });
  let launcherExitReported = false;
  try {
    for (;;) {
      opts.signal?.throwIfAborted();
      if (await opts.isUp()) return;
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
        throw new ProviderStartError(
          name,
          `provider "${name}" did not become ready within ${start.ready_timeout_ms} ms after \`${start.command}\`${launcherNote}${tail.describe()}`,
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

/** The last lines of a command's output, for the error that explains why it failed. */
class OutputTail {
  private readonly lines: string[] = [];

  push(stream: 'stdout' | 'stderr', line: string): void {
    const short = line.length > TAIL_LINE_CHARS ? `${line.slice(0, TAIL_LINE_CHARS)}…` : line;
    this.lines.push(`[${stream}] ${short}`);
    if (this.lines.length > TAIL_LINES) this.lines.shift();
  }

  /** `; last output:` and the lines, indented; '' when there was none. */
  describe(): string {
    return this.lines.length === 0 ? '' : `; last output:\n${this.lines.map((line) => `  ${line}`).join('\n')}`;
  }
}

function relayOutput(child: GroupProcess, onOutput: EnsureStartedOptions['onOutput']): OutputTail {
  const tail = new OutputTail();
  for (const stream of ['stdout', 'stderr'] as const) {
    // Progress bars redraw a line with \r: only what it finally shows is kept.
    createInterface({ input: child[stream], crlfDelay: Infinity }).on('line', (line) => {
      const text = line.replace(/\r+$/, '').split('\r').at(-1) ?? '';
      tail.push(stream, text);
      onOutput(stream, text);
    });
  }
  return tail;
}

function describeExit(status: ExitStatus): string {
  if (status.code !== null) return `exited with code ${status.code}`;
  if (status.signal !== null) return `was killed by ${status.signal}`;
  return 'could not be run';
}

// ─── every provider of a config ─────────────────────────────────────────────

export interface StartProvidersOptions {
  /** Output and status lines of every started provider, as telemetry events. */
  onOutput: (event: ProviderOutput) => void;
  signal?: AbortSignal;
  /** Default: isReachable (a GET of `{base_url}/models`, any status within 1 s). */
  isUp?: (provider: Provider) => Promise<boolean>;
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
  const isUp = opts.isUp ?? ((provider: Provider) => isReachable(provider));
  const providers = [...config.providers.values()].filter((provider) => provider.start);
  const results = await Promise.allSettled(
    providers.map((provider) => {
      const onOutput = (stream: OutputStream, line: string): void =>
        opts.onOutput({ type: 'provider_output', provider: provider.name, stream, line });
      return ensureProviderStarted(provider, { isUp: () => isUp(provider), onOutput, signal: opts.signal }).catch((err: unknown) => {
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
  const stopAll = (): Promise<void> =>
    (stopping ??= Promise.all([...started.values()].map((provider) => provider.stop())).then(() => undefined));

  if (opts.signal?.aborted) {
    await stopAll();
    throw opts.signal.reason;
  }
  return { started, failed, stopAll };
}
