import { ConfigError } from '../config/errors.js';
import { loadConfig, resolveConfigPath } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { ProgressBar } from '../bench-command/progress.js';
import { renderHuman, renderJson, targetLabel } from '../bench-command/report.js';
import { benchTargets } from '../bench-command/run-bench.js';
import {
  BenchUsageError,
  directTarget,
  parseProxyUrl,
  selectRoutes,
  selectTiers,
  throughTarget,
  type BenchTarget,
  type Workload,
} from '../bench-command/targets.js';

export interface BenchOptions {
  config?: string;
  route?: string;
  tier?: string;
  requests: number;
  concurrency: number;
  prompt: string;
  /** Send the prompt as given every time (measures the server's prompt cache); default: unique per request. */
  samePrompt?: boolean;
  maxTokens: number;
  through?: string;
  json?: boolean;
}

/** `llm-route bench`: 0; 1 when every request of some tier failed; 2 for a bad config or selection. */
export async function runBench(opts: BenchOptions): Promise<number> {
  let targets: BenchTarget[];
  try {
    const config = loadConfig(resolveConfigPath(opts.config));
    targets = buildTargets(config, opts);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.format()}\n`);
      return 2;
    }
    if (error instanceof BenchUsageError) {
      process.stderr.write(`llm-route bench: ${error.message}\n`);
      return 2;
    }
    throw error;
  }

  const progress = ProgressBar.on(process.stderr);
  const results = await benchTargets(targets, opts, (done, total, target) => progress?.update(done, total, targetLabel(target)));
  progress?.clear();

  process.stdout.write(opts.json ? renderJson(results) : renderHuman(results));
  return results.some((result) => result.errors === result.requests) ? 1 : 0;
}

function buildTargets(config: Config, opts: BenchOptions): BenchTarget[] {
  const workload: Workload = { maxTokens: opts.maxTokens };
  if (opts.through === undefined) return selectTiers(config, opts.route, opts.tier).map((tier) => directTarget(tier, workload));
  if (opts.tier !== undefined) {
    throw new BenchUsageError('--tier cannot be used with --through: the proxy picks the tier; leave out --through to bench one tier directly');
  }
  const proxy = parseProxyUrl(opts.through);
  return selectRoutes(config, opts.route).map((route) => throughTarget(route, proxy, workload, config.server.auth_token));
}
