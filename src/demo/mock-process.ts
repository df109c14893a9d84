import { execa, type ResultPromise } from 'execa';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../bin/llm-route.js', import.meta.url));
const READY = / listening on (http:\/\/\S+)$/;

export interface MockProcess {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** Runs `llm-route mock` as a child process and resolves once it prints its URL. */
export async function startMockProcess(args: string[], timeoutMs = 10_000): Promise<MockProcess> {
  const child: ResultPromise = execa(process.execPath, [CLI, 'mock', ...args], { stdout: 'pipe', stderr: 'pipe', reject: false, cleanup: true });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`llm-route mock did not start within ${timeoutMs} ms`)), timeoutMs);
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const match = READY.exec(line);
      if (match) {
        clearTimeout(timer);
        lines.close();
        resolve(match[1]);
      }
    });
    void child.then((result) => {
      clearTimeout(timer);
      reject(new Error(`llm-route mock exited early (${result.exitCode}): ${String(result.stderr).trim()}`));
    });
  });
  return {
    url,
    port: Number(new URL(url).port),
    stop: async () => {
      child.kill('SIGTERM');
      await child;
    },
  };
}
