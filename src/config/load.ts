import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { caFilePath, caFileProblems } from './ca-file.js';
import { configWarnings, crossCheck } from './cross-checks.js';
import { schemaAt } from './describe-schema.js';
import { substituteEnv, type Env } from './env.js';
import { ConfigError, formatProblem } from './errors.js';
import { byPosition, Reporter } from './positions.js';
import { redact, secretValues } from './redact.js';
import { schemaProblems } from './schema-issues.js';
import {
  ConfigSchema,
  DEFAULT_CIRCUIT,
  DEFAULT_MAX_TOKENS,
  DEFAULT_RETRY,
  DEFAULT_STALL,
  DEFAULT_TIMEOUTS,
  FROM_CLIENT,
  type Budget,
  type Config,
  type Provider,
  type ProviderConfig,
  type RawConfig,
  type Route,
  type ServerConfig,
  type Tier,
} from './schema.js';
import { isLoopbackHost } from '../util/loopback.js';
import { readSavers } from './savers.js';
import { DEFAULT_ENCODING } from '../tokens/count.js';
import { syntaxProblems } from './yaml-syntax.js';
import { fileProblem } from './config-path.js';

export { resolveConfigPath } from './config-path.js';

// ─── reading ────────────────────────────────────────────────────────────────

/** Reads, substitutes, validates and resolves a tier file. Throws ConfigError listing every problem. */
export function loadConfig(file: string, env: Env = process.env): Config {
  const absolute = resolve(file);
  let text: string;
  try {
    text = readFileSync(absolute, 'utf8');
  } catch (error) {
    throw fileProblem(absolute, `cannot read the tier file: ${readFailure(error)}`);
  }
  return loadConfigText(text, absolute, env);
}

function readFailure(error: unknown): string {
  const code = error instanceof Error && 'code' in error ? error.code : undefined;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a directory';
  return errorMessage(error);
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// ─── the pipeline ───────────────────────────────────────────────────────────

/** Like loadConfig, for text already in hand; `file` names it in problems and in Config.file. */
export function loadConfigText(text: string, file: string, env: Env = process.env): Config {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true, merge: true });
  const report = new Reporter(file, doc, lineCounter);

  const syntax = syntaxProblems(doc, text, report);
  if (syntax.length > 0) throw new ConfigError(syntax);

  const substitution = substituteEnv(doc, env, { keepString: (path) => schemaAt(path)?.type === 'string' });
  const problems = substitution.issues.map((issue) => report.atOffset(issue.offset, issue.path, issue.message));
  let data: unknown;
  try {
    data = doc.toJS();
  } catch (error) {
    // e.g. yaml's guard against alias bombs
    throw new ConfigError([report.atOffset(0, [], `invalid YAML: ${errorMessage(error)}`)]);
  }

  const secrets = secretValues(data, env, substitution.variables);
  // jitless: a tier file is parsed once (again on a reload), and zod's generated fast path for
  // an object schema costs more to build than it saves here (~13 ms of a `serve` start-up).
  const parsed = ConfigSchema.safeParse(data, { jitless: true });
  if (!parsed.success) {
    // A value whose variable is missing would also fail the schema; one problem for it is enough.
    const unsubstituted = substitution.issues.map((issue) => issue.path);
    problems.push(...schemaProblems(parsed.error.issues, data, report, unsubstituted, secrets));
  }
  problems.push(...crossCheck(data, report));
  problems.push(...caFileProblems(data, file, report));

  if (problems.length > 0 || !parsed.success) {
    throw new ConfigError(problems.sort(byPosition).map((problem) => redact(problem, secrets)));
  }
  const warnings = configWarnings(data, report).sort(byPosition).map(formatProblem);
  return buildConfig(parsed.data, resolve(file), warnings);
}

// ─── building the resolved config ───────────────────────────────────────────

/**
 * Local servers (Ollama, llama.cpp, vLLM on loopback) continue a trailing assistant message;
 * cloud ones may not (current Claude models reject an assistant prefill), so they replay instead.
 */
function prefillByDefault(provider: Provider): boolean {
  return provider.type === 'ollama' || (provider.type === 'openai' && provider.local);
}

function buildConfig(raw: RawConfig, file: string, warnings: string[]): Config {
  const providers = new Map<string, Provider>(Object.entries(raw.providers).map(([name, provider]) => [name, resolveProvider(name, provider, file)]));
  const routes = new Map<string, Route>();
  for (const [routeName, route] of Object.entries(raw.routes)) {
    const tiers = route.tiers.map((tier, index) => ({
      route: routeName,
      name: tier.name ?? tier.provider,
      index,
      provider: providers.get(tier.provider) as Provider, // crossCheck guarantees it exists
      model: tier.model,
      weight: tier.weight,
      timeouts: resolveTimeouts({ ...DEFAULT_TIMEOUTS, ...route.timeouts, ...tier.timeouts }),
      retry: { ...DEFAULT_RETRY, ...route.retry, ...tier.retry },
      circuit: resolveCircuit(
        { ...DEFAULT_CIRCUIT, ...route.circuit, ...tier.circuit },
        tier.timeouts?.ttft_ms ?? route.timeouts?.ttft_ms ?? DEFAULT_TIMEOUTS.ttft_ms,
      ),
      rollback: tier.rollback ?? null,
      max_tokens: tier.max_tokens ?? DEFAULT_MAX_TOKENS,
      max_tokens_cap: tier.max_tokens,
      ollama: { ...raw.providers[tier.provider].ollama, ...tier.ollama },
      tokenizer: tier.tokenizer ?? DEFAULT_ENCODING,
      prefill: tier.prefill ?? prefillByDefault(providers.get(tier.provider) as Provider),
      warm: tier.warm ?? false,
      fit: { context: tier.context ?? 'auto', max_prompt_tokens: tier.max_prompt_tokens, vision: tier.vision ?? 'auto', tools: tier.tools ?? 'auto' },
      tool_text: tier.tool_text ?? 'auto',
      ...priceOf(tier.price ?? providers.get(tier.provider)?.price),
      ...(route.kind === 'embeddings' ? { embedding: { space: tier.space ?? tier.model, max_batch: tier.max_batch } } : {}),
    }));
    // An embeddings route rewrites no body: the top-level savers are for chat (its own `savers:` is refused).
    const savers = route.kind === 'embeddings' ? [] : readSavers(route.savers ?? raw.savers ?? [], []).specs; // crossCheck vouched for them
    routes.set(routeName, {
      name: routeName,
      tiers,
      deadline_ms: route.deadline_ms,
      aliases: route.aliases ?? [],
      savers,
      on_break: route.on_break,
      resume_max: route.resume?.max ?? 1,
      stall: route.stall ?? DEFAULT_STALL,
      hedge_ms: route.hedge_ms ?? null,
      ...(route.local_only ? { local_only: true } : {}),
      ...(route.kind === 'embeddings' ? { embedding: { space: route.space ?? tiers[0].embedding?.space ?? tiers[0].model } } : {}),
    });
  }
  return {
    file,
    server: resolveServer(raw.server),
    providers,
    routes,
    default_route: raw.default_route ?? null,
    warnings,
    rules: (raw.rules ?? []).map((rule, index) => ({ index, label: rule.name ?? index, route: rule.route, when: rule.when })),
    usage: resolveUsage(raw.usage, file),
    budgets: (raw.budgets ?? []).map(resolveBudget),
    idempotency: raw.idempotency,
    state: raw.state,
    telemetry: raw.telemetry ?? {},
  };
}

function priceOf(price: Tier['price']): Pick<Tier, 'price'> {
  return price ? { price } : {};
}

function resolveUsage(usage: RawConfig['usage'], file: string): Config['usage'] {
  return {
    path: usage?.path === undefined ? null : resolve(dirname(file), usage.path),
    retention_days: usage?.retention_days ?? 90,
    enabled: usage?.enabled ?? true,
  };
}

// budget-checks guarantees exactly one of usd / tokens.
function resolveBudget(budget: NonNullable<RawConfig['budgets']>[number]): Budget {
  const unit = budget.usd !== undefined ? 'usd' : 'tokens';
  return { scope: budget.scope, per: budget.per, unit, limit: (unit === 'usd' ? budget.usd : budget.tokens) as number };
}

// `${KEY:-}` yields "": that means "no key", not an empty credential.
function resolveProvider(name: string, provider: ProviderConfig, file: string): Provider {
  const { api_key, health, ca_file, ...rest } = provider;
  const local = isLoopbackHost(new URL(provider.base_url).hostname);
  const resolved: Provider = {
    ...rest,
    name,
    local,
    health: { ...health, interval_ms: health.interval_ms, warmup: health.warmup ?? local },
  };
  // from_client is no key: the provider has none of its own, and is sent the client's.
  if (api_key === FROM_CLIENT) resolved.from_client = true;
  else if (api_key) resolved.api_key = api_key;
  if (ca_file) resolved.ca_file = caFilePath(ca_file, file);
  return resolved;
}

function resolveTimeouts(timeouts: Omit<Tier['timeouts'], 'cold_ttft_ms'> & { cold_ttft_ms?: number }): Tier['timeouts'] {
  return { ...timeouts, cold_ttft_ms: Math.max(timeouts.cold_ttft_ms ?? timeouts.ttft_ms, timeouts.ttft_ms) };
}

function resolveCircuit(circuit: Omit<Tier['circuit'], 'slow_ttft_ms'> & { slow_ttft_ms?: number }, ttftMs: number): Tier['circuit'] {
  return {
    ...circuit,
    slow_ttft_ms: circuit.slow_ttft_ms ?? Math.round(ttftMs * 0.8),
    max_cooldown_ms: Math.max(circuit.max_cooldown_ms, circuit.cooldown_ms),
  };
}

function resolveServer(server: ServerConfig): ServerConfig {
  const { auth_token, ...rest } = server;
  return auth_token ? { ...rest, auth_token } : rest;
}
