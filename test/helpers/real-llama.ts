import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './build.js';
import { closedPort, processRunning } from './ports.js';

/**
 * A real llama.cpp `llama-server` with a random-weight model, built once per machine by
 * scripts/real-llama/build.sh into $LLAMA_DIR (default /tmp/real-llama) and started by
 * scripts/real-llama/start.sh. The tests that use it (files named *real-llama*) skip when the
 * build is not there, and the run's last lines say so (skip-reporter.ts).
 */
export const REAL_LLAMA_DIR = process.env.LLAMA_DIR ?? '/tmp/real-llama';
export const REAL_LLAMA_SCRIPTS = join(repoRoot, 'scripts/real-llama');
const START = join(REAL_LLAMA_SCRIPTS, 'start.sh');
const BIN = `${REAL_LLAMA_DIR}/llama.cpp/build/bin/llama-server`;
const MODEL = `${REAL_LLAMA_DIR}/models/random-smollm2-shape-f16.gguf`;

export const realLlamaBuilt = (): boolean => existsSync(BIN) && existsSync(MODEL);

/** What the run's end says after the count of real-llama tests it skipped. */
export const realLlamaSkipNote = (dir = REAL_LLAMA_DIR): string =>
  `real-llama tests skipped: no llama-server build in ${dir}. To run them, build one once with scripts/real-llama/build.sh (about 10 min on 2 cores; LLAMA_DIR=… builds elsewhere), then npm test.`;

/** A test file that runs against the real llama-server. */
export const isRealLlamaFile = (moduleId: string): boolean => /[\\/][^\\/]*real-llama[^\\/]*\.test\.ts$/.test(moduleId);

export interface RealLlama {
  port: number;
  /** The base URL of an `openai`-type provider: http://127.0.0.1:PORT/v1. */
  url: string;
  /** Its log file (llama-server's own lines, e.g. `cancel task`). */
  log: string;
  pid(): number;
  /** Starts it again on the same port, with the same arguments (after a test killed it). */
  restart(): Promise<void>;
  /** SIGTERM, or `signal`; resolves once it has exited, its pid file and log removed (not after a SIGKILL). Idempotent. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

const run = promisify(execFile);

/**
 * Starts a llama-server on a free loopback port with `args` (e.g. `-c 2048`) and resolves once
 * its model is loaded. Each caller gets a server of its own, so test files (and checkouts)
 * running at once never share one.
 */
export async function startRealLlama(args: string[] = []): Promise<RealLlama> {
  const port = await closedPort();
  const pidFile = `${REAL_LLAMA_DIR}/llama-server.${port}.pid`;
  // The server dies with this test runner, however it ends (a SIGKILL too): its worker, and the
  // vitest process that forked it, are watched (scripts/real-llama/watchdog.sh).
  const env = { ...process.env, LLAMA_DIR: REAL_LLAMA_DIR, WATCH_PIDS: `${process.pid} ${process.ppid}` };
  const launch = () => run(START, [String(port), ...args], { env, timeout: 180_000 }).then(() => undefined);
  await launch();
  const pid = (): number => Number(readFileSync(pidFile, 'utf8'));
  const log = `${REAL_LLAMA_DIR}/llama-server.${port}.log`;
  return {
    port,
    url: `http://127.0.0.1:${port}/v1`,
    log,
    pid,
    restart: launch,
    async stop(signal = 'SIGTERM') {
      if (!existsSync(pidFile)) return;
      const id = pid();
      if (processRunning(id)) {
        process.kill(id, signal);
        // SIGTERM: llama-server stops generating and exits once its sockets are done (seconds).
        const deadline = Date.now() + 15_000;
        while (processRunning(id) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
        if (processRunning(id)) process.kill(id, 'SIGKILL');
      }
      // Each run takes new ports: what a stopped server leaves would pile up in LLAMA_DIR. (A test's
      // SIGKILL keeps them: it may start the server again.)
      if (signal !== 'SIGKILL') for (const file of [pidFile, log, `${REAL_LLAMA_DIR}/llama-server.${port}.watchdog.pid`]) rmSync(file, { force: true });
    },
  };
}

/**
 * A llama-server that embeds: `--embeddings`, and `--pooling mean` (the test model is a chat
 * model, whose own pooling is none, which llama-server's /v1/embeddings refuses). Its vectors are
 * the random-weight model's hidden width, normalized.
 */
export function startRealLlamaEmbeddings(args: string[] = []): Promise<RealLlama> {
  return startRealLlama(['--embeddings', '--pooling', 'mean', ...args]);
}
