import { isLocalNetworkHost } from '../util/loopback.js';
import type { ConfigProblem } from './errors.js';
import type { Reporter } from './positions.js';
import { isRecord } from './raw-data.js';
import { closestMatch } from './suggest.js';

/**
 * What the schema cannot say about `rules:`: each names an existing route, and no two share a
 * `name:` (the request log would not tell them apart). Reads the raw data defensively.
 */
export function ruleProblems(data: Record<string, unknown>, report: Reporter): ConfigProblem[] {
  if (!Array.isArray(data.rules)) return [];
  const routes = isRecord(data.routes) ? Object.keys(data.routes) : [];
  const problems: ConfigProblem[] = [];
  const names = new Map<string, number>();
  data.rules.forEach((rule: unknown, index: number) => {
    if (!isRecord(rule)) return;
    if (typeof rule.route === 'string' && rule.route !== '' && isRecord(data.routes) && !Object.hasOwn(data.routes, rule.route)) {
      const suggestion = closestMatch(rule.route, routes);
      const hint = suggestion ? `did you mean "${suggestion}"?` : `routes: ${routes.join(', ')}`;
      problems.push(report.at('value', ['rules', index, 'route'], `rule names unknown route "${rule.route}"; ${hint}`));
    }
    if (typeof rule.name !== 'string') return;
    const first = names.get(rule.name);
    if (first === undefined) names.set(rule.name, index);
    else problems.push(report.at('value', ['rules', index, 'name'], `duplicate rule name "${rule.name}" (rules[${first}] has it too)`));
  });
  return problems;
}

/** A provider's base URL host is on the local network (as written: never a DNS answer). */
export function isLocalBaseUrl(baseUrl: string): boolean {
  try {
    return isLocalNetworkHost(new URL(baseUrl).hostname);
  } catch {
    return false;
  }
}

/** A `local_only` route none of whose tiers is local would answer every request with 503 no_local_tier. */
export function localOnlyWarnings(data: Record<string, unknown>, report: Reporter): ConfigProblem[] {
  if (!isRecord(data.routes) || !isRecord(data.providers)) return [];
  const providers = data.providers;
  const warnings: ConfigProblem[] = [];
  for (const [name, route] of Object.entries(data.routes)) {
    if (!isRecord(route) || route.local_only !== true || !Array.isArray(route.tiers)) continue;
    const anyLocal = route.tiers.some((tier: unknown) => {
      const provider = isRecord(tier) && typeof tier.provider === 'string' ? providers[tier.provider] : undefined;
      return isRecord(provider) && typeof provider.base_url === 'string' && isLocalBaseUrl(provider.base_url);
    });
    if (!anyLocal)
      warnings.push(
        report.at(
          'key',
          ['routes', name, 'local_only'],
          `warning: route "${name}" is local_only but none of its tiers is on the local network; every request to it gets 503 no_local_tier`,
        ),
      );
  }
  return warnings;
}
