import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ServeOptions } from '../../../src/cli/serve.js';

// serve's own way in (src/cli/serve-args.ts) must read every command line it takes exactly as the
// commander program does (src/cli/main.ts), and leave every other one to it. Here runServe is a
// recording stand-in, so both paths can be asked about the same command line without serving.
const served: ServeOptions[] = [];
vi.mock('../../../src/cli/serve.js', () => ({
  runServe: async (opts: ServeOptions) => {
    served.push({ ...opts });
    return 0;
  },
}));

const { main } = await import('../../../src/cli/main.js');
const { parseServeArgs, serveFromArgs } = await import('../../../src/cli/serve-args.js');

/** What the commander program hands runServe for `llm-route serve ...args`. */
async function commanderReads(args: string[]): Promise<ServeOptions> {
  served.length = 0;
  await main(['node', 'llm-route', 'serve', ...args]);
  expect(served).toHaveLength(1);
  return served[0];
}

/** runServe reads a missing `ui` as true, as commander sets it for a `--no-ui` flag that is absent. */
const asServed = (opts: ServeOptions): ServeOptions => ({ ...opts, ui: opts.ui ?? true });

describe("serve's command line without the commander program (src/cli/serve-args.ts)", () => {
  afterEach(() => {
    served.length = 0;
  });

  const taken: string[][] = [
    [],
    ['--no-ui'],
    ['-c', 'tiers.yaml'],
    ['--config', 'tiers.yaml', '--no-ui'],
    ['--config=tiers.yaml'],
    ['--config='],
    ['-c', 'a.yaml', '-c', 'b.yaml'],
    ['--host', '0.0.0.0', '--port', '4242'],
    ['--host=::1', '--port=0'],
    ['--port', '65535', '--no-ui', '-c', 'x=y.yaml'],
    ['--port', '08080'],
    ['--no-ui', '--no-ui'],
  ];

  it.each(taken)('takes %j as the commander program reads it', async (...args) => {
    const fast = parseServeArgs(args);
    expect(fast).not.toBeNull();
    expect(asServed(fast as ServeOptions)).toEqual(asServed(await commanderReads(args)));
  });

  it('leaves help, mistakes and other spellings to the full CLI, without loading serve', async () => {
    const declined = [
      ['--help'],
      ['-h'],
      ['--version'],
      ['-c'],
      ['--config', '--no-ui'],
      ['--port', '65536'],
      ['--port', '-1'],
      ['--port', '4e3'],
      ['--port', ' 80'],
      ['--port', 'x'],
      ['--port='],
      ['-ctiers.yaml'],
      ['--ui'],
      ['--bogus'],
      ['extra'],
      ['--', '-c', 'x.yaml'],
    ];
    for (const args of declined) {
      expect(parseServeArgs(args), JSON.stringify(args)).toBeNull();
      expect(await serveFromArgs(args)).toBeNull();
    }
    expect(served).toEqual([]);
  });

  it('runs serve with what it read, and returns its exit code', async () => {
    expect(await serveFromArgs(['-c', 'tiers.yaml', '--port', '4141', '--no-ui'])).toBe(0);
    expect(served).toEqual([{ config: 'tiers.yaml', port: 4141, ui: false }]);
  });
});
