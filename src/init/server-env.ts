import { DEFAULT_PORTS, type DiscoverOptions, type ServerKind } from './scan-local-servers.js';

/**
 * Where `init` looks, from the environment. llm-route's own variables first (LLM_ROUTE_INIT_HOST
 * for every kind, LLM_ROUTE_INIT_PORTS per kind), then each server's own documented variable:
 * Ollama's OLLAMA_HOST (parsed as Ollama parses it), llama.cpp's LLAMA_ARG_HOST / LLAMA_ARG_PORT.
 * LM Studio and vLLM have none for their API port (vLLM's VLLM_PORT is an internal port).
 */
export const INIT_ENV_HELP = [
  'Where it looks (first that is set):',
  '  LLM_ROUTE_INIT_HOST      host for every server (default 127.0.0.1)',
  '  LLM_ROUTE_INIT_PORTS     ports per server: ollama=11434,lmstudio=1234,llamacpp=8080,vllm=8000 (any subset)',
  "  OLLAMA_HOST              Ollama's own: host, host:port or http(s)://host:port",
  "  LLAMA_ARG_HOST, LLAMA_ARG_PORT   llama-server's own",
  'Cloud keys that each add a tier: ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENROUTER_API_KEY,',
  '  GEMINI_API_KEY (or GOOGLE_API_KEY), GROQ_API_KEY, MISTRAL_API_KEY, DEEPSEEK_API_KEY (referenced as ${VAR}, never copied).',
];

export function discoverOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): DiscoverOptions {
  const ports: Partial<Record<ServerKind, number>> = {};
  for (const pair of (env.LLM_ROUTE_INIT_PORTS ?? '').split(',')) {
    const [kind, port] = pair.split('=').map((s) => s.trim());
    if (kind in DEFAULT_PORTS && /^\d+$/.test(port ?? '')) ports[kind as ServerKind] = Number(port);
  }
  const host = env.LLM_ROUTE_INIT_HOST || undefined;
  const origins: DiscoverOptions['origins'] = {};
  // A server's own variable counts only where llm-route's say nothing of that server.
  if (host === undefined && ports.ollama === undefined && env.OLLAMA_HOST?.trim()) {
    origins.ollama = { origin: ollamaOrigin(env.OLLAMA_HOST), from: 'OLLAMA_HOST' };
  }
  const llamaHost = env.LLAMA_ARG_HOST?.trim();
  const llamaPort = env.LLAMA_ARG_PORT?.trim();
  if (host === undefined && ports.llamacpp === undefined && (llamaHost || /^\d+$/.test(llamaPort ?? ''))) {
    const origin = `http://${hostPart(connectable(llamaHost || '127.0.0.1'))}:${/^\d+$/.test(llamaPort ?? '') ? llamaPort : DEFAULT_PORTS.llamacpp}`;
    origins.llamacpp = { origin, from: [llamaHost ? 'LLAMA_ARG_HOST' : '', /^\d+$/.test(llamaPort ?? '') ? 'LLAMA_ARG_PORT' : ''].filter(Boolean).join(', ') };
  }
  return { host, ports, origins };
}

/**
 * OLLAMA_HOST as Ollama's client reads it (envconfig.Host): an optional http(s):// scheme,
 * host and port (11434 without a scheme, else the scheme's own), an optional path. A bind-all
 * address (what a server is often started with) becomes loopback: init connects to it.
 */
export function ollamaOrigin(value: string): string {
  const text = value.trim();
  const schemeAt = text.indexOf('://');
  const scheme = schemeAt === -1 ? 'http' : text.slice(0, schemeAt);
  const rest = schemeAt === -1 ? text : text.slice(schemeAt + 3);
  const defaultPort = schemeAt === -1 ? '11434' : scheme === 'https' ? '443' : '80';
  const slash = rest.indexOf('/');
  const hostport = slash === -1 ? rest : rest.slice(0, slash);
  const path = slash === -1 ? '' : rest.slice(slash).replace(/\/+$/, '');
  // Go's net.SplitHostPort: "[h]:p" or "h:p" with one colon; anything else is a bare host.
  const split = /^\[([^\]]*)\]:(.*)$/.exec(hostport) ?? /^([^:]*):([^:]*)$/.exec(hostport);
  let host = split ? split[1] : hostport.replace(/^\[|\]$/g, '');
  let port = split ? split[2] : defaultPort;
  if (host === '') host = '127.0.0.1';
  if (!/^\d+$/.test(port) || Number(port) > 65535) port = defaultPort;
  return `${scheme}://${hostPart(connectable(host))}:${port}${path}`;
}

/** A listen-everywhere address is not one to connect to: its loopback instead. */
function connectable(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '::1';
  return host;
}

function hostPart(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}
