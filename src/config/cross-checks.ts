import { budgetProblems } from './budget-checks.js';
import type { ConfigProblem } from './errors.js';
import type { Reporter } from './positions.js';
import { isRecord } from './raw-data.js';
import { closestMatch } from './suggest.js';

/**
 * What the schema cannot express: names are non-empty, tiers' providers are defined, and tier names
 * are unique per route. Reads the raw data defensively, so it can run even when the schema failed.
 */
export function crossCheck(data: unknown, report: Reporter): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (!isRecord(data)) return problems;
  problems.push(...budgetProblems(data, report));
  const providers = isRecord(data.providers) ? Object.keys(data.providers) : undefined;
  for (const name of providers ?? []) {
    if (name.trim() === '') problems.push(report.at('key', ['providers', name], 'a provider name must not be empty'));
  }
  if (!isRecord(data.routes)) return problems;

  for (const [routeName, route] of Object.entries(data.routes)) {
    if (routeName.trim() === '') problems.push(report.at('key', ['routes', routeName], 'a route name must not be empty'));
    if (!isRecord(route) || !Array.isArray(route.tiers)) continue;
    const firstIndexByName = new Map<string, number>();
    route.tiers.forEach((tier: unknown, index: number) => {
      if (!isRecord(tier)) return;
      const tierPath = ['routes', routeName, 'tiers', index];
      const provider = typeof tier.provider === 'string' && tier.provider !== '' ? tier.provider : undefined;
      if (provider !== undefined && providers !== undefined && !providers.includes(provider)) {
        problems.push(report.at('value', [...tierPath, 'provider'], unknownProviderMessage(provider, providers)));
      }
      const explicitName = typeof tier.name === 'string' && tier.name !== '' ? tier.name : undefined;
      const name = explicitName ?? provider;
      if (name === undefined) return;
      const first = firstIndexByName.get(name);
      if (first === undefined) {
        firstIndexByName.set(name, index);
        return;
      }
      const message = explicitName
        ? `duplicate tier name "${name}" in route "${routeName}" (tiers[${first}] has it too); tier names must be unique in a route`
        : `tier name "${name}" (a tier without \`name\` is named after its provider) is already used by tiers[${first}] ` +
          `in route "${routeName}"; give this tier a distinct \`name\``;
      problems.push(report.at('value', explicitName ? [...tierPath, 'name'] : tierPath, message));
    });
  }
  return problems;
}

function unknownProviderMessage(provider: string, providers: readonly string[]): string {
  const suggestion = closestMatch(provider, providers);
  if (suggestion) return `unknown provider "${provider}"; did you mean "${suggestion}"?`;
  if (providers.length === 0) return `unknown provider "${provider}"; no providers are defined`;
  return `unknown provider "${provider}"; defined providers: ${providers.join(', ')}`;
}
