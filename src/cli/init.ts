import { existsSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { ConfigError } from '../config/errors.js';
import { loadConfigText } from '../config/load.js';
import { cloudProvidersInEnv } from '../init/cloud-keys.js';
import { discoverLocalServers } from '../init/scan-local-servers.js';
import { discoverOptionsFromEnv } from '../init/server-env.js';
import { tierFileText } from '../init/tier-file.js';
import { withArticle } from '../util/format.js';
import { summarizeConfig } from './validate.js';

export interface InitOptions {
  config?: string;
  yes?: boolean;
  force?: boolean;
}

/**
 * `llm-route init`: looks for local model servers and cloud keys, writes a commented tier file
 * that validates, and prints the next command. Asks before writing only on a TTY without --yes.
 * Exit 0 written (or declined), 1 the file would not validate (a bug), 2 it exists (no --force).
 */
export async function runInit(opts: InitOptions): Promise<number> {
  const file = resolve(opts.config ?? process.env.LLM_ROUTE_CONFIG ?? 'llm-route.yaml');
  if (existsSync(file) && !opts.force) {
    process.stderr.write(`llm-route init: ${file} exists; not overwriting it (pass --force to replace it, or -c OTHER.yaml)\n`);
    return 2;
  }
  const out = (line: string): boolean => process.stdout.write(`${line}\n`);
  out('Looking for local model servers and cloud keys…');
  const where = discoverOptionsFromEnv();
  for (const [kind, { origin, from }] of Object.entries(where.origins ?? {})) out(`  ${kind}: asking ${origin} (from $${from.replace(', ', ', $')})`);
  const { found, skipped } = await discoverLocalServers(where);
  const clouds = cloudProvidersInEnv();
  for (const server of found) {
    const embeddings = server.embeddings.length > 0 ? `; embeddings: ${server.embeddings.join(', ')}` : '';
    out(`  found ${server.label} at ${server.baseUrl}: ${server.models.length === 0 ? 'no model loaded' : server.models.join(', ')}${embeddings}`);
  }
  for (const line of skipped) out(`  ${line}`);
  // Names of the variables only: a key's value is never read into the file or the output.
  for (const cloud of clouds) out(`  found $${cloud.envVar}: ${withArticle(cloud.name)} tier (${cloud.model}), its key referenced as \${${cloud.envVar}}`);
  const nothing = found.every((s) => s.models.length === 0) && clouds.length === 0;
  if (nothing) {
    out(
      "  nothing usable found: writing the demo's mock tiers; install Ollama (https://ollama.com) or LM Studio, or set OPENAI_API_KEY / ANTHROPIC_API_KEY / GEMINI_API_KEY, then run `llm-route init --force`",
    );
    out('  a server on another host or port? say where: OLLAMA_HOST=host:port, LLAMA_ARG_PORT=N, LLM_ROUTE_INIT_HOST=host,');
    out('  LLM_ROUTE_INIT_PORTS=ollama=N,lmstudio=N,llamacpp=N,vllm=N (see `llm-route init --help`)');
  }

  const text = tierFileText(found, clouds);
  let summary: string;
  try {
    summary = summarizeConfig(loadConfigText(text, file, process.env));
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`llm-route init: the file it would write does not validate (a bug; please report it):\n${error.format()}\n`);
    return 1;
  }
  if (!opts.yes && process.stdin.isTTY && process.stdout.isTTY && !(await confirm(`Write ${file}? [Y/n] `))) {
    out('Nothing written.');
    return 0;
  }
  writeFileSync(file, text, { mode: 0o644 });
  out(`Wrote ${file}`);
  // The line `validate` prints for this file, word for word.
  out(summary);
  const flag = opts.config ? ` -c ${opts.config}` : '';
  out('Next:');
  out(`  llm-route serve${flag}              # the proxy on http://127.0.0.1:4141/v1`);
  out(`  llm-route exec${flag} -- claude     # or any client, pointed at it with no setup`);
  if (nothing) out("  (serve starts the two mock tiers itself: see the file's header)");
  return 0;
}

async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return !/^n/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}
