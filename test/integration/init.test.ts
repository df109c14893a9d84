import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { repoRoot } from '../helpers/cli.js';
import { llamaCppServer, lmStudioModels, ollamaTags, type PathServer, pathServer, vllmModels } from '../helpers/model-servers.js';

const SECRET = 'sk-ant-api03-very-secret-value-0123456789';
const open: PathServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function serverOf(replies: Parameters<typeof pathServer>[0]): Promise<PathServer> {
  const s = await pathServer(replies);
  open.push(s);
  return s;
}

/** A port nothing listens on (a server opened and closed). */
async function closedPort(): Promise<number> {
  const s = await pathServer({});
  await s.close();
  return s.port;
}

/** `llm-route init ARGS` in a fresh dir, no TTY, with only the given cloud keys set. */
function init(args: string[], ports: Record<string, number>, env: Record<string, string> = {}, dir = freshDir()): Promise<{ code: number | null; out: string; err: string; dir: string }> {
  const base: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/_API_KEY$/.test(k) && k !== 'LLM_ROUTE_CONFIG') base[k] = v;
  const child = spawn(process.execPath, [join(repoRoot, 'bin/llm-route.js'), 'init', ...args], {
    cwd: dir, stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...base, ...env, LLM_ROUTE_INIT_PORTS: Object.entries(ports).map(([k, v]) => `${k}=${v}`).join(',') },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += String(d)));
  child.stderr.on('data', (d) => (err += String(d)));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out, err, dir })));
}

function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'llm-route-init-'));
  dirs.push(d);
  return d;
}

describe('llm-route init', () => {
  it('finds Ollama, LM Studio, llama.cpp and vLLM with all their models, one tier each, cloud keys as ${VAR}', async () => {
    const ollama = await serverOf(ollamaTags(['llama3.2:latest', 'qwen2.5-coder:7b']));
    const lmstudio = await serverOf(lmStudioModels(['qwen2.5-7b-instruct', 'gemma-3-4b'], ['text-embedding-nomic-embed-text-v1.5']));
    const llama = await serverOf(llamaCppServer('qwen2.5-0.5b-instruct-q4_k_m.gguf'));
    const vllm = await serverOf(vllmModels(['Qwen/Qwen2.5-1.5B-Instruct']));
    const run = await init(['--yes'], { ollama: ollama.port, lmstudio: lmstudio.port, llamacpp: llama.port, vllm: vllm.port }, { ANTHROPIC_API_KEY: SECRET });
    expect(run.code, run.err).toBe(0);
    const file = join(run.dir, 'llm-route.yaml');
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(SECRET);
    expect(run.out + run.err).not.toContain(SECRET);
    expect(text).toContain('api_key: ${ANTHROPIC_API_KEY}');
    for (const model of ['qwen2.5-coder:7b', 'gemma-3-4b']) expect(text).toMatch(new RegExp(`#\\s+model: "${model.replace(/[.]/g, '\\.')}"`));
    expect(text).not.toContain('nomic-embed');

    const config = loadConfig(file, { ANTHROPIC_API_KEY: SECRET });
    const tiers = config.routes.get('chat')?.tiers ?? [];
    expect(tiers.map((t) => [t.name, t.provider.type, t.provider.base_url, t.model])).toEqual([
      ['ollama', 'ollama', `http://127.0.0.1:${ollama.port}`, 'llama3.2:latest'],
      ['lm-studio', 'openai', `http://127.0.0.1:${lmstudio.port}/v1`, 'qwen2.5-7b-instruct'],
      ['llama-cpp', 'openai', `http://127.0.0.1:${llama.port}/v1`, 'qwen2.5-0.5b-instruct-q4_k_m.gguf'],
      ['vllm', 'openai', `http://127.0.0.1:${vllm.port}/v1`, 'Qwen/Qwen2.5-1.5B-Instruct'],
      ['anthropic', 'anthropic', 'https://api.anthropic.com', 'claude-sonnet-4-5'],
    ]);
    expect(config.default_route).toBe('chat');
    expect(run.out).toContain('llm-route serve');
    expect(run.out).toContain('llm-route exec -- claude');

    // `validate` (the real command) accepts what it wrote.
    const validate = spawn(process.execPath, [join(repoRoot, 'bin/llm-route.js'), 'validate'], { cwd: run.dir, env: { ...process.env, ANTHROPIC_API_KEY: SECRET }, stdio: 'ignore' });
    expect(await new Promise((resolve) => validate.once('exit', resolve))).toBe(0);
  }, 30_000);

  it('names a port that answers something else and skips it; a closed port is silent', async () => {
    const webApp = await serverOf({ '/': { status: 200, body: '<html>my dev server</html>', type: 'text/html' } });
    const vllm = await serverOf(vllmModels(['meta-llama/Llama-3.1-8B-Instruct']));
    const closed = await closedPort();
    const run = await init(['--yes'], { ollama: closed, lmstudio: closed, llamacpp: webApp.port, vllm: vllm.port });
    expect(run.code, run.err).toBe(0);
    expect(run.out).toContain(`port ${webApp.port} answers, but not as llama.cpp / llama-swap (HTTP 404, not JSON): skipped`);
    expect(run.out).not.toContain(`port ${closed}`);
    const config = loadConfig(join(run.dir, 'llm-route.yaml'), {});
    expect(config.routes.get('chat')?.tiers.map((t) => t.name)).toEqual(['vllm']);
  }, 30_000);

  it('nothing found: the demo\'s mock tiers and a note on what to install; the file validates', async () => {
    const closed = await closedPort();
    const run = await init(['--yes'], { ollama: closed, lmstudio: closed, llamacpp: closed, vllm: closed });
    expect(run.code, run.err).toBe(0);
    expect(run.out).toMatch(/nothing usable found.*install Ollama/);
    const text = readFileSync(join(run.dir, 'llm-route.yaml'), 'utf8');
    expect(text).toMatch(/# Nothing found/);
    expect(text).toContain('llm-route mock --port 4101');
    const config = loadConfig(join(run.dir, 'llm-route.yaml'), {});
    expect(config.routes.get('chat')?.tiers.map((t) => t.provider.base_url)).toEqual(['http://127.0.0.1:4101/v1', 'http://127.0.0.1:4102/v1']);
  }, 30_000);

  it('never overwrites a file without --force; -c writes elsewhere; --force replaces', async () => {
    const closed = await closedPort();
    const ports = { ollama: closed, lmstudio: closed, llamacpp: closed, vllm: closed };
    const dir = freshDir();
    writeFileSync(join(dir, 'llm-route.yaml'), 'mine\n');
    const refused = await init([], ports, {}, dir);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/exists; not overwriting it \(pass --force/);
    expect(readFileSync(join(dir, 'llm-route.yaml'), 'utf8')).toBe('mine\n');

    const other = await init(['-c', 'other.yaml'], ports, {}, dir);
    expect(other.code, other.err).toBe(0);
    expect(other.out).toContain('llm-route serve -c other.yaml');
    expect(readFileSync(join(dir, 'other.yaml'), 'utf8')).toContain('version: 1');

    const forced = await init(['--force'], ports, {}, dir);
    expect(forced.code, forced.err).toBe(0);
    expect(readFileSync(join(dir, 'llm-route.yaml'), 'utf8')).toContain('version: 1');
  }, 30_000);

  it('a cloud key alone is a tier, referenced, never copied (every known variable)', async () => {
    const closed = await closedPort();
    const keys = { OPENAI_API_KEY: `${SECRET}-openai`, OPENROUTER_API_KEY: `${SECRET}-or`, GEMINI_API_KEY: `${SECRET}-gem` };
    const run = await init(['--yes'], { ollama: closed, lmstudio: closed, llamacpp: closed, vllm: closed }, keys);
    expect(run.code, run.err).toBe(0);
    const text = readFileSync(join(run.dir, 'llm-route.yaml'), 'utf8');
    expect(text + run.out + run.err).not.toContain(SECRET);
    const config = loadConfig(join(run.dir, 'llm-route.yaml'), keys);
    expect(config.routes.get('chat')?.tiers.map((t) => t.name)).toEqual(['openai', 'openrouter', 'gemini']);
  }, 30_000);
});
