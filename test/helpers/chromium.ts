import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bridgeTargets, netnsUnavailable, spawnInNetns, stop, type Target } from './netns.js';

export type { Target };

/**
 * A real headless Chromium (Debian's `chromium`) in a network namespace of its own
 * (`unshare -n`, loopback only: netns.ts), so a page can reach nothing but the addresses a
 * test lets it. The Host, Origin and every other byte pass unchanged; the outside end keeps
 * the head of each request it carried.
 */

export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

/** Why a real-browser test cannot run here, or null when it can. */
export function browserUnavailable(): string | null {
  if (!existsSync(CHROMIUM)) return `${CHROMIUM} is missing (apt-get install -y chromium)`;
  return netnsUnavailable();
}

export interface Browser {
  /** The request heads (request line and headers) carried to each target, as `host:port`. */
  heads(target: Target): string[];
  /** Chromium's stderr so far (for a failing test's message). */
  stderr(): string;
  close(): Promise<void>;
}

/** Starts Chromium on `url`, reaching only `targets`, with extra command-line flags. */
export async function launchChromium(url: string, targets: Target[], flags: string[] = []): Promise<Browser> {
  const dir = mkdtempSync(join(tmpdir(), 'llm-route-chromium-'));
  const heads = new Map<string, string[]>();
  const bridges = await bridgeTargets(dir, targets, heads);
  const chromium = [
    CHROMIUM,
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-dev-shm-usage',
    `--user-data-dir=${join(dir, 'profile')}`,
    ...flags,
    url,
  ];
  const child = spawnInNetns(dir, targets, chromium, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d) => (stderr += String(d)));
  return {
    heads: (t) => heads.get(`${t.host}:${t.port}`) ?? [],
    stderr: () => stderr,
    async close() {
      await stop(child);
      for (const b of bridges) b.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
