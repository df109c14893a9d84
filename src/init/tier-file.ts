import type { CloudProvider } from './cloud-keys.js';
import { embeddingsRouteLines } from './embeddings-route.js';
import type { FoundServer } from './scan-local-servers.js';

/** A YAML double-quoted scalar (JSON's string syntax is valid YAML). */
const q = (s: string): string => JSON.stringify(s);

/** A provider or tier name from a label: lower-case letters, digits and dashes. */
function slug(label: string): string {
  return (
    label
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || 'local'
  );
}

/** Why every model name lands on `chat`, and what that costs (a typo is answered too). */
const ALIAS_NOTE = [
  '# Clients name a route in `model`. aliases: ["*"] sends every other name here (claude-…,',
  '# gpt-…, and a typo like "caht" too: it is answered, and the log says once per name that it',
  '# came only through "*"). To have unknown names refused (404), list globs instead, e.g.',
  '# aliases: ["claude-*", "gpt-*"]. default_route takes requests that name no model.',
];

/** The routes' start: the route `chat`, taking every model name, its tiers next. */
const CHAT_ROUTE = ['', ...ALIAS_NOTE, 'default_route: chat', 'routes:', '  chat:', '    aliases: ["*"]', '    tiers:'];

/** Offered, commented, when no ANTHROPIC_API_KEY is set: the client's own login or key (docs/client-credentials.md). */
const CLAUDE_PLAN_PROVIDER = [
  '  # claude:                    # no ANTHROPIC_API_KEY found: with a Claude subscription, uncomment this and the',
  "  #   type: anthropic          # claude tier below; `llm-route exec -- claude` then keeps Claude Code's own login,",
  '  #   base_url: "https://api.anthropic.com"   # and your plan answers when the local tiers cannot',
  "  #   api_key: from_client     # the client's own credential, sent to this provider only",
];

/**
 * Time budgets for a local tier, sized for an agent's prompt (as the Claude Code examples are):
 * with the default 10 s, a 14B model still reading a 20k-token prompt would be cut off, and the
 * request would move to the next tier without the user ever hearing why.
 */
const LOCAL_TIMEOUTS = '        timeouts: { ttft_ms: 20000, cold_ttft_ms: 60000 }   # agent-sized: see the note above';
const LOCAL_TIMEOUTS_NOTE = [
  "      # Local tiers get agent-sized time budgets. An agent's prompt (Claude Code, Codex: 20k tokens",
  '      # and more, with its tools) takes a 7B-14B model seconds to read before its first token, and',
  '      # longer when the model must be loaded first: ttft_ms 20 s once loaded, cold_ttft_ms 60 s for',
  '      # a load. Past them a request moves on to the next tier without a word to the client (the log',
  '      # and `llm-route usage` show it). For short chats only, lower them: failover comes sooner.',
];

/**
 * The text of a commented tier file: one route `chat` taking every model name (`aliases: ["*"]`,
 * `default_route`), each local server a tier (its first model; the others as comments; budgets
 * for an agent's prompt) in front of each cloud provider found. Nothing found: the demo's two mock tiers and a note.
 */
export function tierFileText(found: FoundServer[], clouds: CloudProvider[], when = new Date()): string {
  const lines: string[] = [
    `# llm-route tier file, written by \`llm-route init\` on ${when.toISOString().slice(0, 10)}.`,
    '# Requests try the tiers of a route in order (local first), failing over on errors and timeouts.',
    '# Check it with `llm-route validate`; see docs/tier-file.md for every key.',
    'version: 1',
    'server:',
    '  host: 127.0.0.1',
    '  port: 4141',
    '',
    'providers:',
  ];
  const tiers: string[] = [];
  const used = new Set<string>();
  const unique = (base: string): string => {
    let name = base;
    for (let i = 2; used.has(name); i++) name = `${base}-${i}`;
    used.add(name);
    return name;
  };

  // A server with no model loaded makes no tier: with nothing else, the file falls back to the mocks.
  if (found.every((s) => s.models.length === 0) && clouds.length === 0) return mockFile(lines);

  if (found.some((server) => server.models.length > 0)) tiers.push(...LOCAL_TIMEOUTS_NOTE);
  const providerNames = new Map<FoundServer, string>();
  for (const server of found) {
    const name = unique(slug(server.label));
    providerNames.set(server, name);
    lines.push(`  ${name}:                 # ${server.label}, found on ${server.baseUrl}`, `    type: ${server.type}`, `    base_url: ${q(server.baseUrl)}`);
    const [first, ...others] = server.models;
    if (first === undefined) {
      tiers.push(
        `      # ${name}: ${server.label} is running but lists no ${server.embeddings.length > 0 ? 'chat ' : ''}model; load one, then add a tier:`,
        `      # - { name: ${name}, provider: ${name}, model: "MODEL" }`,
      );
      continue;
    }
    tiers.push(`      - name: ${name}`, `        provider: ${name}`, `        model: ${q(first)}`, LOCAL_TIMEOUTS);
    if (others.length > 0) {
      tiers.push(`        # other models on ${server.label}: put one in \`model\` above, or add a tier for it`);
      for (const model of others) tiers.push(`        #   model: ${q(model)}`);
    }
  }
  for (const cloud of clouds) {
    const name = unique(cloud.name);
    lines.push(
      `  ${name}:`,
      `    type: ${cloud.type}`,
      `    base_url: ${q(cloud.baseUrl)}`,
      `    api_key: \${${cloud.envVar}}    # read from the environment when llm-route starts`,
    );
    if (cloud.price)
      lines.push(
        `    price: { input_per_mtok: ${cloud.price.input_per_mtok}, output_per_mtok: ${cloud.price.output_per_mtok} }   # USD per 1M tokens; check the provider's page`,
      );
    tiers.push(`      - name: ${name}`, `        provider: ${name}`, `        model: ${q(cloud.model)}   # change to the model you want`);
  }
  // No Anthropic key: a Claude subscription can still be the fallback, through Claude Code's own login.
  if (!clouds.some((cloud) => cloud.type === 'anthropic')) {
    lines.push(...CLAUDE_PLAN_PROVIDER);
    tiers.push(`      # - { name: claude, provider: claude, model: "claude-sonnet-4-5" }   # your Claude plan as the fallback (uncomment with its provider)`);
  }
  lines.push(...CHAT_ROUTE, ...tiers, ...embeddingsRouteLines(found, providerNames), '');
  return lines.join('\n');
}

/**
 * Nothing on this machine: the demo's mock tiers, so `serve` works, and what to install. Their
 * `start:` commands have `serve` (and `exec`) run the mocks when nothing answers on their ports.
 */
function mockFile(head: string[]): string {
  return [
    '# Nothing found: no local model server (Ollama :11434, LM Studio :1234, llama.cpp / llama-swap :8080,',
    '# vLLM :8000) answered, and no cloud key (OPENAI_API_KEY, ANTHROPIC_API_KEY, …) is set.',
    '# Install one, e.g. Ollama (https://ollama.com, then `ollama pull llama3.2`) or LM Studio',
    '# (https://lmstudio.ai), or export a cloud key, then run `llm-route init --force` again.',
    '# Meanwhile these two tiers are the demo\'s simulated upstreams (`llm-route mock`, a flaky "local"',
    '# and a steady "cloud"): `llm-route serve` runs their `start:` commands when nothing answers on',
    '# their ports, and stops them when it exits.',
    ...head,
    '  local:',
    '    type: openai',
    '    base_url: "http://127.0.0.1:4101/v1"',
    '    start: { command: "llm-route mock --port 4101 --name local --fail-rate 0.1" }',
    '  cloud:',
    '    type: openai',
    '    base_url: "http://127.0.0.1:4102/v1"',
    '    start: { command: "llm-route mock --port 4102 --name cloud" }',
    ...CHAT_ROUTE,
    '      - { name: local, provider: local, model: local }',
    '      - { name: cloud, provider: cloud, model: cloud }',
    '',
  ].join('\n');
}
