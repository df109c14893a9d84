import { enableCompileCache } from './compile-cache.js';
import { tuningOff } from './switch.js';

type Cli = { main: (argv: string[]) => Promise<void> };
type ServeEntry = { serveFromArgs: (args: readonly string[]) => Promise<number | null> };

/**
 * What bin/llm-route.js runs: Node's compile cache on first, so that what follows compiles
 * through it, then the CLI joined into a few files of dist/bundle/ (scripts/bundle.mjs; Node's
 * loader costs ~0.7 ms a file and `serve` takes ~330) — or, with the tuning switched off
 * (src/runtime/switch.ts), tsc's one file per module in dist/.
 */
export async function loadCli(): Promise<Cli> {
  enableCompileCache();
  // A specifier in a variable: dist/bundle/ is scripts/bundle.mjs's output, not a module of src/.
  const entry = tuningOff('bundle') ? '../cli/main.js' : '../bundle/main.js';
  return (await import(entry)) as Cli;
}

/**
 * `serve`'s own way in (bin/llm-route.js), the same way as loadCli's but without the commander
 * program: src/cli/serve-args.ts, which loads serve alone when its flags need nothing else.
 */
export async function loadServe(): Promise<ServeEntry> {
  enableCompileCache();
  const entry = tuningOff('bundle') ? '../cli/serve-args.js' : '../bundle/serve-args.js';
  return (await import(entry)) as ServeEntry;
}
