import { ConfigError } from '../config/errors.js';
import { loadConfig, resolveConfigPath } from '../config/load.js';
import type { Config } from '../config/schema.js';

/** `llm-route validate`: 0 and a one-line summary when the tier file is valid; 2 and every problem otherwise. */
export async function runValidate(opts: { config?: string }): Promise<number> {
  try {
    const config = loadConfig(resolveConfigPath(opts.config));
    for (const warning of config.warnings) process.stderr.write(`${warning}\n`);
    process.stdout.write(`${summarizeConfig(config)}\n`);
    return 0;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.format()}\n`);
    return 2;
  }
}

/** `ok: /abs/llm-route.yaml — 2 routes (chat: local → cloud; code: cloud), 3 providers` (`, 2 rules` when it has rules) */
export function summarizeConfig(config: Config): string {
  const routes = [...config.routes.values()].map((route) => `${route.name}: ${route.tiers.map((tier) => tier.name).join(' → ')}`).join('; ');
  const routeCount = plural(config.routes.size, 'route');
  const providerCount = plural(config.providers.size, 'provider');
  const rules = config.rules?.length ? `, ${plural(config.rules.length, 'rule')}` : '';
  return `ok: ${config.file} — ${routeCount} (${routes}), ${providerCount}${rules}`;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
