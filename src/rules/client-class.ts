import type { IncomingHttpHeaders } from 'node:http';
import { modelClass } from '../config/find-route.js';
import type { ClientRequest } from '../protocols/core/types.js';
import { geminiCliClass, isGeminiCli } from './gemini-cli-class.js';

/**
 * Who sent a request and what for (docs/rules.md), from what each client itself
 * sends; docs/rules.md says what each class relies on.
 *
 * Claude Code: user-agent `claude-cli/<version> (…)`; with CLAUDE_CODE_GATEWAY_HINT_HEADERS=1
 * (which `exec` sets) it labels each request `x-claude-code-request-class`. Without the label:
 * the model name `exec` gave the class (`<route>@background` for ANTHROPIC_SMALL_FAST_MODEL and
 * ANTHROPIC_DEFAULT_HAIKU_MODEL, `<route>@subagent` for CLAUDE_CODE_SUBAGENT_MODEL), and a
 * subagent's system billing block ends `cc_is_subagent=true;`.
 * Codex CLI: a user-agent and `originator` header that start `codex_` (`codex_cli_rs/<version>`
 * from the TUI; `codex exec` 0.171.0 sent `codex_exec/0.171.0 (…)` and `originator: codex_exec`,
 * seen in a loopback-only namespace); its own subagents send `x-openai-subagent` (review, compact, …).
 * Ollama's clients: any request on Ollama's API (its codec says so: Open WebUI, Continue and
 * JetBrains send no name of their own), and a user-agent that names one — `ollama-js/…`,
 * `ollama-python/…`, and VS Code's Copilot (`GitHubCopilotChat/…`), whose Ollama provider sends
 * its chat to /v1/chat/completions.
 * Gemini CLI: its user-agent (gemini-cli-class.ts).
 */
export type ClientKind = 'claude-code' | 'codex' | 'gemini-cli' | 'ollama' | 'other';
export type RequestClass = 'main' | 'background' | 'subagent';

const OLLAMA_AGENTS = /^(ollama-js|ollama-python|GitHubCopilotChat)\//;

/** `spokenFor`: the client family whose API the request came on, when only one family speaks it (see ClientCodec.client). */
export function identifyClient(headers: IncomingHttpHeaders, spokenFor?: ClientKind): ClientKind {
  const agent = headers['user-agent'] ?? '';
  if (agent.startsWith('claude-cli/') || headers['x-claude-code-request-class'] !== undefined) return 'claude-code';
  const originator = headers.originator;
  if (agent.startsWith('codex_') || (typeof originator === 'string' && originator.startsWith('codex_'))) return 'codex';
  if (isGeminiCli(agent)) return 'gemini-cli';
  if (spokenFor) return spokenFor;
  return OLLAMA_AGENTS.test(agent) ? 'ollama' : 'other';
}

/**
 * Claude Code's labels: `auxiliary` (titles, topic and quota checks, hook evaluations) is
 * background; `compaction` summarises the whole history and `workflow` runs the user's own
 * steps, so both stay with the main loop (a small local model would not hold or do them).
 */
const CLAUDE_CODE_LABELS: Record<string, RequestClass> = { main: 'main', subagent: 'subagent', auxiliary: 'background', compaction: 'main', workflow: 'main' };

/** Codex's own housekeeping runs; any other `x-openai-subagent` (review, collab_spawn, …) is a subagent. */
const CODEX_BACKGROUND = new Set(['compact', 'memory_consolidation']);

export function requestClass(client: ClientKind, headers: IncomingHttpHeaders, request: Pick<ClientRequest, 'model' | 'body' | 'stream'>): RequestClass {
  const { model, body } = request;
  if (client === 'claude-code') {
    const label = headers['x-claude-code-request-class'];
    const labelled = typeof label === 'string' ? CLAUDE_CODE_LABELS[label.trim().toLowerCase()] : undefined;
    if (labelled) return labelled;
    return modelClass(model) ?? (billedAsSubagent(body.system) ? 'subagent' : 'main');
  }
  if (client === 'codex') {
    const subagent = headers['x-openai-subagent'];
    if (typeof subagent === 'string' && subagent !== '') return CODEX_BACKGROUND.has(subagent) ? 'background' : 'subagent';
  }
  if (client === 'gemini-cli') return modelClass(model) ?? geminiCliClass(body, request.stream);
  return modelClass(model) ?? 'main';
}

/** Claude Code's first system block is its billing line (`x-anthropic-billing-header: …;`); a subagent's ends `cc_is_subagent=true;`. */
function billedAsSubagent(system: unknown): boolean {
  if (!Array.isArray(system)) return false;
  // The billing block leads; a couple more are enough to read past a reordering.
  for (const block of system.slice(0, 3)) {
    const text = block !== null && typeof block === 'object' ? (block as { text?: unknown }).text : undefined;
    if (typeof text === 'string' && text.includes('cc_is_subagent=true;')) return true;
  }
  return false;
}
