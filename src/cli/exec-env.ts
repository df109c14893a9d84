import { basename } from 'node:path';
import { findRoute } from '../config/find-route.js';
import type { Config, Route } from '../config/schema.js';
import { tierFit } from '../fit/tier-facts.js';
import { LLM_ROUTE_TOKEN_HEADER } from '../protocols/core/credential.js';
import { profileOf } from '../protocols/profiles.js';
import type { TraceExport } from '../config/trace-export.js';
import { GEMINI_MODEL, geminiCliEnv, isGeminiCli } from './exec-gemini.js';

/** What a command run by `exec` gets so that OpenAI, Anthropic, Codex and Gemini clients inside it reach the private proxy. */
export interface ClientSetup {
  env: Record<string, string>;
  /** The environment variables to take out of the inherited environment. */
  unset: string[];
  /** The command's arguments, with Codex's config overrides when the command is codex. */
  command: string[];
  /** The route Gemini CLI is given, when the command is gemini: its run's settings file names it (exec-gemini.ts). */
  geminiRoute?: string;
}

// A model name each client asks for by default: the proxy routes it when a route's name or alias matches.
const CLAUDE_MODEL = 'claude-sonnet-4-5';
const CODEX_MODEL = 'gpt-5-codex';
const PLACEHOLDER_KEY = 'llm-route';

/**
 * The client setup for `exec`. `url` is the proxy's origin. Clients authenticate with the
 * proxy's auth_token, or a placeholder (Claude Code and the SDKs refuse to start without
 * one); their own keys reach only a provider with `api_key: from_client`. With such a
 * provider of type anthropic on a route, Claude Code keeps its own login (and the token
 * goes in x-llm-route-token); of type openai, Codex sends the user's OPENAI_API_KEY.
 * `route`: the route every client asks for; by default the route Claude's (Codex's) own
 * model name reaches, else the first one.
 */
export function clientSetup(url: string, config: Config, command: string[], route?: string, trace?: TraceExport): ClientSetup {
  const token = config.server.auth_token;
  const key = token ?? PLACEHOLDER_KEY;
  const base = `${url}/v1`;
  const own = clientCredentialApis(config);
  const ownOpenAIKey = own.has('openai') && process.env.OPENAI_API_KEY ? process.env.OPENAI_API_KEY : undefined;
  const env: Record<string, string> = {
    LLM_ROUTE_URL: url,
    OPENAI_BASE_URL: base,
    OPENAI_API_BASE: base,
    OPENAI_API_KEY: token ?? process.env.OPENAI_API_KEY ?? PLACEHOLDER_KEY,
    // Anthropic's base URL has no /v1; a Bearer token (ANTHROPIC_AUTH_TOKEN) needs no approval in Claude Code.
    ANTHROPIC_BASE_URL: url,
    LLM_ROUTE_API_KEY: ownOpenAIKey ?? key,
  };
  // Claude Code's own login (or ANTHROPIC_API_KEY) is what a from_client Anthropic provider is sent: it stays.
  if (!own.has('anthropic')) env.ANTHROPIC_AUTH_TOKEN = key;
  else if (token) env.ANTHROPIC_CUSTOM_HEADERS = withLine(process.env.ANTHROPIC_CUSTOM_HEADERS, `${LLM_ROUTE_TOKEN_HEADER}: ${token}`);
  if (token && own.size > 0) env.LLM_ROUTE_TOKEN = token;
  const firstRoute = [...config.routes.keys()][0];
  // Gemini CLI sends the user's own key only to a route that takes it (a from_client gemini provider).
  const geminiRoute = route ?? findRoute(config, GEMINI_MODEL)?.name ?? firstRoute;
  const ownGeminiKey = own.has('gemini') ? process.env.GEMINI_API_KEY || process.env.GOOGLE_API_KEY || undefined : undefined;
  Object.assign(env, geminiCliEnv(url, geminiRoute, key, { key: ownGeminiKey, token }));
  Object.assign(env, claudeCodeModels(route ?? findRoute(config, CLAUDE_MODEL)?.name ?? firstRoute));
  // Codex always gets a route name for its model: a name it does not know gives its generic
  // tool set (function tools), which every tier can carry; its own model names bring tools
  // only OpenAI runs (a free-form `exec` tool).
  const codexRoute = route ?? findRoute(config, CODEX_MODEL)?.name ?? firstRoute;
  if (trace) Object.assign(env, claudeCodeTraces(trace));
  const unset = own.has('anthropic') ? [] : ['ANTHROPIC_API_KEY'];
  // llm-route's own service name is not the command's.
  if (trace) unset.push('OTEL_SERVICE_NAME');
  return {
    env,
    // With both set, Claude Code warns of an auth conflict; the proxy needs only one (unless the key is Claude Code's own login).
    unset,
    command: isCodex(command[0])
      ? [command[0], ...codexOverrides(base, codexRoute, routeWindow(config.routes.get(codexRoute)), Boolean(ownOpenAIKey && token)), ...command.slice(1)]
      : command,
    ...(isGeminiCli(command[0]) ? { geminiRoute } : {}),
  };
}

/** The APIs whose keys a route sends the client's own credential for (`api_key: from_client`). */
function clientCredentialApis(config: Config): Set<string> {
  const apis = new Set<string>();
  for (const route of config.routes.values())
    for (const tier of route.tiers) if (tier.provider.from_client) apis.add(profileOf(tier.provider).credentialApi ?? '');
  return apis;
}

/** A newline-separated header list (ANTHROPIC_CUSTOM_HEADERS) with one more line. */
function withLine(list: string | undefined, line: string): string {
  return list?.trim() ? `${list.trimEnd()}\n${line}` : line;
}

/**
 * Claude Code's model variables, one name per request class so that rules can tell them apart
 * (docs/rules.md): the main loop asks for the route itself, its small requests
 * (ANTHROPIC_SMALL_FAST_MODEL, else ANTHROPIC_DEFAULT_HAIKU_MODEL) for `<route>@background`,
 * subagents for `<route>@subagent`. Without a rule on the class, each of those names is the
 * route (find-route.ts), so a tier file without rules still sends them all to one route. And
 * the hint variable, with which Claude Code labels each request's class in a header.
 */
function claudeCodeModels(route: string): Record<string, string> {
  return {
    ANTHROPIC_MODEL: route,
    ANTHROPIC_DEFAULT_OPUS_MODEL: route,
    ANTHROPIC_DEFAULT_SONNET_MODEL: route,
    ANTHROPIC_DEFAULT_HAIKU_MODEL: `${route}@background`,
    ANTHROPIC_SMALL_FAST_MODEL: `${route}@background`,
    CLAUDE_CODE_SUBAGENT_MODEL: `${route}@subagent`,
    CLAUDE_CODE_GATEWAY_HINT_HEADERS: '1',
  };
}

/**
 * Claude Code's traces (docs/traces.md), joined to llm-route's: its telemetry and its traces
 * beta on, exported where llm-route's go (the same URL, protocol and headers), and its
 * `traceparent` sent to a base URL that is not Anthropic's (CLAUDE_CODE_PROPAGATE_TRACEPARENT,
 * Claude Code 2.1.152 and later), so that each request's span in llm-route is the child of
 * Claude Code's `claude_code.llm_request` span. Its metrics and logs stay as they were.
 */
function claudeCodeTraces(trace: TraceExport): Record<string, string> {
  const env: Record<string, string> = {
    CLAUDE_CODE_ENABLE_TELEMETRY: '1',
    CLAUDE_CODE_ENHANCED_TELEMETRY_BETA: '1',
    CLAUDE_CODE_PROPAGATE_TRACEPARENT: '1',
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: trace.url,
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: trace.protocol,
  };
  const headers = Object.entries(trace.headers).map(([name, value]) => `${name}=${encodeURIComponent(value)}`);
  if (headers.length > 0) env.OTEL_EXPORTER_OTLP_TRACES_HEADERS = headers.join(',');
  return env;
}

export function isCodex(program: string | undefined): boolean {
  return program !== undefined && /^codex(\.js|\.exe)?$/.test(basename(program));
}

/**
 * The most tokens any tier of the route can take: the largest window when every tier's is
 * known (configured or discovered), else undefined (a tier with no known window may take more).
 */
function routeWindow(route: Route | undefined): number | undefined {
  const windows = route?.tiers.map((tier) => tierFit(tier).context) ?? [];
  return windows.length > 0 && windows.every((w) => w !== undefined) ? Math.max(...(windows as number[])) : undefined;
}

/**
 * Codex ignores OPENAI_BASE_URL for its built-in provider and speaks only the Responses API:
 * it gets a provider of its own, by `-c` overrides (TOML values). Codex's metadata catalog
 * knows only OpenAI's model names, so for a route it warns "Model metadata for … not found"
 * and uses fallback metadata; of that metadata, the window is what matters (Codex compacts its
 * history at 90% of it), so it gets the route's as `model_context_window` when llm-route knows
 * it. (A catalog of our own, `model_catalog_json`, would replace Codex's system prompt too.)
 */
function codexOverrides(base: string, route: string, window: number | undefined, tokenInHeader: boolean): string[] {
  const overrides = [
    'model_provider="llm-route"',
    'model_providers.llm-route.name="llm-route"',
    `model_providers.llm-route.base_url=${JSON.stringify(base)}`,
    'model_providers.llm-route.wire_api="responses"',
    'model_providers.llm-route.env_key="LLM_ROUTE_API_KEY"',
  ];
  // Its key is the user's own (for a from_client provider): llm-route's token goes in a header of its own, read from the environment.
  if (tokenInHeader) overrides.push(`model_providers.llm-route.env_http_headers={"${LLM_ROUTE_TOKEN_HEADER}"="LLM_ROUTE_TOKEN"}`);
  overrides.push(`model=${JSON.stringify(route)}`);
  if (window !== undefined) overrides.push(`model_context_window=${window}`);
  return overrides.flatMap((value) => ['-c', value]);
}
