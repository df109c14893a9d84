import type { ServeOptions } from './serve.js';

// `llm-route serve`'s own start-up path: bin/llm-route.js runs serve from this module without the
// commander program (dist/cli/main.js builds every command's options, ~10-15 ms of a start-up
// that is meant to be short). It takes the flags serve's --help lists, in the forms commander
// takes them; anything else (--help, a mistake, another spelling) goes to the full CLI, which
// answers it as it always has.

/**
 * The flags after `serve`, or null when they need the full CLI: help, an unknown flag, a
 * missing or dash-led value, a port that is not plain digits up to 65535, an operand.
 */
export function parseServeArgs(args: readonly string[]): ServeOptions | null {
  const opts: ServeOptions = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--no-ui') {
      opts.ui = false;
      continue;
    }
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    if (flag !== '-c' && flag !== '--config' && flag !== '--host' && flag !== '--port') return null;
    const value = eq > 0 ? arg.slice(eq + 1) : args[++i];
    if (value === undefined || value.startsWith('-')) return null;
    if (flag === '--host') opts.host = value;
    else if (flag === '--port') {
      // Plain digits only: any other spelling, right or wrong, is the full CLI's to read or word.
      if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) return null;
      opts.port = Number(value);
    } else opts.config = value;
  }
  return opts;
}

/**
 * Runs `serve` with these flags (its exit code), or returns null without loading it when they
 * need the full CLI. serve's own module loads only here, after the flags are known to be good.
 */
export async function serveFromArgs(args: readonly string[]): Promise<number | null> {
  const opts = parseServeArgs(args);
  if (!opts) return null;
  const { runServe } = await import('./serve.js');
  return runServe(opts);
}
