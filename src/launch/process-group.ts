import { execa } from 'execa';
import type { Readable } from 'node:stream';

/** How a process ended: an exit code, or the signal that killed it. */
export interface ExitStatus {
  code: number | null;
  signal: string | null;
}

/**
 * A shell command line running in a process group of its own, so the whole tree it starts
 * (`sh -c`, a launcher script, the server, its workers) can be stopped together.
 */
export interface GroupProcess {
  /** The command's own pid; also the id of its process group. */
  pid: number;
  stdout: Readable;
  stderr: Readable;
  /** Resolves (never rejects) when the command's own process has exited. */
  exited: Promise<ExitStatus>;
  /** The exit status once exited; undefined while it runs. */
  exitStatus(): ExitStatus | undefined;
  /**
   * SIGTERM to the whole group, SIGKILL after `killAfterMs` if any of it is still there.
   * Idempotent; resolves once the command's process has exited and the group is empty
   * (or was killed).
   */
  stop(): Promise<void>;
}

const DEFAULT_KILL_AFTER_MS = 5_000;
const GROUP_POLL_MS = 50;

export function spawnGroup(command: string, options: { killAfterMs?: number } = {}): GroupProcess {
  const killAfterMs = options.killAfterMs ?? DEFAULT_KILL_AFTER_MS;
  const subprocess = execa(command, {
    shell: true,
    // Its own process group: a terminal's Ctrl-C reaches only llm-route, which then stops
    // the provider after the proxy has drained, and one signal to -pid reaches the whole tree.
    detached: true,
    // execa's cleanup skips detached processes anyway; the exit hook below replaces it.
    cleanup: false,
    forceKillAfterDelay: false,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
    // A model server logs for hours: the caller reads the lines; nothing is kept here.
    buffer: false,
    reject: false,
  });
  const { pid } = subprocess;
  if (pid === undefined || !subprocess.stdout || !subprocess.stderr) {
    void subprocess.catch(() => undefined);
    throw new Error(`could not run \`${command}\`: no process was created`);
  }

  let status: ExitStatus | undefined;
  const exited = subprocess.then(
    (result) => (status = { code: result.exitCode ?? null, signal: result.signal ?? null }),
    () => (status = { code: null, signal: null }),
  );

  // If llm-route itself exits without stop() (an uncaught error, process.exit), the tree must
  // not outlive it. Only synchronous work is possible here, so it is a SIGTERM and no wait.
  const onParentExit = (): void => signalGroup(pid, 'SIGTERM');
  process.once('exit', onParentExit);
  void exited.then(() => {
    if (!groupAlive(pid)) process.off('exit', onParentExit);
  });

  let stopping: Promise<void> | undefined;
  const gone = (): boolean => status !== undefined && !groupAlive(pid);
  const terminate = async (): Promise<void> => {
    // Once the group is empty its id may be reused: no signal then.
    if (!gone()) signalGroup(pid, 'SIGTERM');
    if (!(await waitFor(gone, killAfterMs))) signalGroup(pid, 'SIGKILL');
    await exited;
    process.off('exit', onParentExit);
  };

  return {
    pid,
    stdout: subprocess.stdout,
    stderr: subprocess.stderr,
    exited,
    exitStatus: () => status,
    stop: () => (stopping ??= terminate()),
  };
}

/** Sends `signal` to every process of the group; a group that is already gone is fine. */
function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/**
 * Whether any process of the group is left. Exited children not yet reaped by init count
 * too, so in a container whose init reaps lazily this can stay true a little longer.
 */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    // EPERM: a member exists but belongs to someone else (it changed its uid).
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, GROUP_POLL_MS));
  }
  return true;
}
