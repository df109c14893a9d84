import { budgetProblems } from './budget-checks.js';
import { embeddingProblems } from './embedding-checks.js';
import { FROM_CLIENT } from './provider-schema.js';
import type { ConfigProblem } from './errors.js';
import type { Reporter } from './positions.js';
import { isRecord } from './raw-data.js';
import { closestMatch } from './suggest.js';
import { localOnlyWarnings, ruleProblems } from './rule-checks.js';
import { saverProblems } from './savers.js';
import { streamCapProblems } from './stream-cap-checks.js';
import { withArticle } from '../util/format.js';

/**
 * What the schema cannot express: names are non-empty, tiers' providers are defined, tier names
 * are unique per route, and savers are known with the right options. Reads the raw data
 * defensively, so it can run even when the schema failed.
 */
export function crossCheck(data: unknown, report: Reporter): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (!isRecord(data)) return problems;
  problems.push(...saverProblems(data, report));
  problems.push(...budgetProblems(data, report));
  problems.push(...streamCapProblems(data, report));
  problems.push(...ruleProblems(data, report));
  problems.push(...embeddingProblems(data, report));
  const providers = isRecord(data.providers) ? Object.keys(data.providers) : undefined;
  for (const name of providers ?? []) {
    if (name.trim() === '') problems.push(report.at('key', ['providers', name], 'a provider name must not be empty'));
    else if (!headerSafe(name)) problems.push(report.at('key', ['providers', name], unsafeNameMessage('provider', name)));
    const provider = (data.providers as Record<string, unknown>)[name];
    if (!isRecord(provider) || typeof provider.type !== 'string') continue;
    if (provider.passthrough !== undefined && provider.type !== 'openai') {
      problems.push(
        report.at(
          'key',
          ['providers', name, 'passthrough'],
          `passthrough is for openai-type providers (servers that also serve other APIs); this one is type ${provider.type}`,
        ),
      );
    }
    if (isRecord(provider.limits) && ['rpm', 'tpm', 'concurrency'].every((key) => (provider.limits as Record<string, unknown>)[key] === undefined)) {
      problems.push(report.at('key', ['providers', name, 'limits'], 'limits need at least one of rpm, tpm or concurrency (queue_ms alone limits nothing)'));
    }
    if (provider.api_key === FROM_CLIENT && provider.type === 'ollama') {
      problems.push(
        report.at(
          'value',
          ['providers', name, 'api_key'],
          "api_key: from_client is for anthropic, openai and gemini providers (a client's own key or login is for a cloud API); an ollama provider takes no credential",
        ),
      );
    }
    if (provider.ollama !== undefined && provider.type !== 'ollama') {
      problems.push(
        report.at('key', ['providers', name, 'ollama'], `ollama options need type: ollama (the native API); this provider is type ${provider.type}`),
      );
    }
  }
  if (!isRecord(data.routes)) return problems;
  if (typeof data.default_route === 'string' && data.default_route !== '' && !Object.hasOwn(data.routes, data.default_route)) {
    problems.push(
      report.at('value', ['default_route'], `default_route "${data.default_route}" is not a route; routes: ${Object.keys(data.routes).join(', ')}`),
    );
  }

  for (const [routeName, route] of Object.entries(data.routes)) {
    if (routeName.trim() === '') problems.push(report.at('key', ['routes', routeName], 'a route name must not be empty'));
    else if (!headerSafe(routeName)) problems.push(report.at('key', ['routes', routeName], unsafeNameMessage('route', routeName)));
    if (!isRecord(route) || !Array.isArray(route.tiers)) continue;
    if (route.hedge_ms !== undefined && route.tiers.length < 2) {
      problems.push(report.at('key', ['routes', routeName, 'hedge_ms'], 'hedge_ms starts the next tier as well: a route with one tier has none to start'));
    }
    const firstIndexByName = new Map<string, number>();
    route.tiers.forEach((tier: unknown, index: number) => {
      if (!isRecord(tier)) return;
      const tierPath = ['routes', routeName, 'tiers', index];
      const provider = typeof tier.provider === 'string' && tier.provider !== '' ? tier.provider : undefined;
      if (provider !== undefined && providers !== undefined && !providers.includes(provider)) {
        problems.push(report.at('value', [...tierPath, 'provider'], unknownProviderMessage(provider, providers)));
      }
      const providerType = provider !== undefined && isRecord(data.providers) && isRecord(data.providers[provider]) ? data.providers[provider].type : undefined;
      if (tier.ollama !== undefined && providerType !== undefined && providerType !== 'ollama') {
        problems.push(
          report.at('key', [...tierPath, 'ollama'], `ollama options need a provider of type ollama; "${provider}" is type ${String(providerType)}`),
        );
      }
      const explicitName = typeof tier.name === 'string' && tier.name !== '' ? tier.name : undefined;
      if (explicitName !== undefined && !headerSafe(explicitName))
        problems.push(report.at('value', [...tierPath, 'name'], unsafeNameMessage('tier', explicitName)));
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

/**
 * What is valid but probably a mistake: an `anthropic`, `ollama` or `gemini` base URL ending in
 * the API version those types add themselves (/v1/messages, /api/chat, /v1beta/models/…), an
 * alias an earlier route already claims (it never matches here), and `stall` on a route that
 * does not resume.
 */
export function configWarnings(data: unknown, report: Reporter): ConfigProblem[] {
  const warnings: ConfigProblem[] = [];
  if (!isRecord(data)) return warnings;
  warnings.push(...localOnlyWarnings(data, report));
  if (isRecord(data.providers)) {
    for (const [name, provider] of Object.entries(data.providers)) {
      if (!isRecord(provider) || typeof provider.base_url !== 'string' || typeof provider.type !== 'string') continue;
      const suffix = Object.hasOwn(VERSION_SUFFIXES, provider.type) ? VERSION_SUFFIXES[provider.type] : undefined;
      const version = suffix?.pattern.exec(provider.base_url)?.[1];
      if (suffix && version) {
        warnings.push(
          report.at(
            'value',
            ['providers', name, 'base_url'],
            `warning: ${withArticle(provider.type)} base_url usually has no ${version} (llm-route adds ${suffix.adds}), e.g. ${suffix.example}`,
          ),
        );
      }
    }
  }
  if (isRecord(data.routes)) {
    const claimed = new Map<string, string>();
    for (const [routeName, route] of Object.entries(data.routes)) {
      if (isRecord(route) && route.stall !== undefined && route.on_break !== 'resume')
        warnings.push(
          report.at(
            'key',
            ['routes', routeName, 'stall'],
            'warning: stall is read only on a route with on_break: resume (nothing could mend a stream cut on it)',
          ),
        );
      if (!isRecord(route) || !Array.isArray(route.aliases)) continue;
      route.aliases.forEach((alias: unknown, index: number) => {
        if (typeof alias !== 'string') return;
        const owner = claimed.get(alias);
        if (owner !== undefined)
          warnings.push(
            report.at('value', ['routes', routeName, 'aliases', index], `warning: alias "${alias}" is already route "${owner}"'s; it never matches here`),
          );
        else claimed.set(alias, routeName);
      });
    }
  }
  return warnings;
}

/** The version a type's base URL should not end in, for each type that adds its own path. */
const VERSION_SUFFIXES: Readonly<Record<string, { pattern: RegExp; adds: string; example: string }>> = {
  anthropic: { pattern: /(\/v1)\/?$/, adds: '/v1/messages', example: 'https://api.anthropic.com' },
  ollama: { pattern: /(\/v1)\/?$/, adds: '/api/chat', example: 'http://127.0.0.1:11434' },
  gemini: { pattern: /(\/v1(?:beta)?)\/?$/, adds: '/v1beta/models/{model}:streamGenerateContent', example: 'https://generativelanguage.googleapis.com' },
};

/**
 * Route and tier names go out in response headers (x-llm-route-route, x-llm-route-tier) and
 * metric labels: a name with a character a header cannot carry (an arrow, an em dash, CJK)
 * would make every answer of that tier fail at its first byte.
 */
function headerSafe(name: string): boolean {
  return /^[\x20-\x7e]+$/.test(name);
}

function unsafeNameMessage(what: string, name: string): string {
  return `${what} name ${JSON.stringify(name)} has a character outside printable ASCII (names are sent in response headers); use letters, digits, - _ . :`;
}
