import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import { buildPrivateCli, repoRoot, runCli } from '../../helpers/cli.js';
import { llamaCppServer, lmStudioModels, ollamaTags, type PathServer, pathServer, vllmModels } from '../../helpers/model-servers.js';

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

/** `llm-route init ARGS` in a fresh dir, no TTY, with only the given cloud keys and server variables set. */
function init(
  args: string[],
  ports: Record<string, number>,
  env: Record<string, string> = {},
  dir = freshDir(),
): Promise<{ code: number | null; out: string; err: string; dir: string }> {
  const base: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/_API_KEY$|^OLLAMA_HOST$|^LLAMA_ARG_|^LLM_ROUTE_/.test(k)) base[k] = v;
  const child = spawn(process.execPath, [join(repoRoot, 'bin/llm-route.js'), 'init', ...args], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...base,
      ...env,
      LLM_ROUTE_INIT_PORTS: Object.entries(ports)
        .map(([k, v]) => `${k}=${v}`)
        .join(','),
    },
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
    const ollama = await serverOf(ollamaTags(['llama3.2:latest', 'qwen2.5-coder:7b'], ['nomic-embed-text:latest']));
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
    // Embedding models are no chat tier: an embeddings route of the first one found, the others named as spaces of their own.
    expect(text).toContain('#   lm-studio: "text-embedding-nomic-embed-text-v1.5"');
    expect(run.out).toContain('embeddings: nomic-embed-text:latest');

    const config = loadConfig(file, { ANTHROPIC_API_KEY: SECRET });
    const embed = config.routes.get('embed');
    expect(embed?.embedding).toEqual({ space: 'nomic-embed-text:latest' });
    expect(embed?.aliases).toEqual(['nomic-embed-text:latest', 'nomic-embed-text']);
    expect(embed?.tiers.map((t) => [t.name, t.provider.type, t.model])).toEqual([['ollama-embed', 'ollama', 'nomic-embed-text:latest']]);
    const tiers = config.routes.get('chat')?.tiers ?? [];
    expect(tiers.map((t) => [t.name, t.provider.type, t.provider.base_url, t.model])).toEqual([
      ['ollama', 'ollama', `http://127.0.0.1:${ollama.port}`, 'llama3.2:latest'],
      ['lm-studio', 'openai', `http://127.0.0.1:${lmstudio.port}/v1`, 'qwen2.5-7b-instruct'],
      ['llama-cpp', 'openai', `http://127.0.0.1:${llama.port}/v1`, 'qwen2.5-0.5b-instruct-q4_k_m.gguf'],
      ['vllm', 'openai', `http://127.0.0.1:${vllm.port}/v1`, 'Qwen/Qwen2.5-1.5B-Instruct'],
      ['anthropic', 'anthropic', 'https://api.anthropic.com', 'claude-sonnet-4-5'],
    ]);
    expect(config.default_route).toBe('chat');
    // Local tiers: budgets for an agent's prompt on a 7B-14B model, said in the file; the cloud tier keeps the defaults.
    expect(tiers.map((t) => [t.name, t.timeouts.ttft_ms, t.timeouts.cold_ttft_ms])).toEqual([
      ['ollama', 20_000, 60_000],
      ['lm-studio', 20_000, 60_000],
      ['llama-cpp', 20_000, 60_000],
      ['vllm', 20_000, 60_000],
      ['anthropic', 10_000, 10_000],
    ]);
    expect(text).toMatch(/# Local tiers get agent-sized time budgets\. An agent's prompt \(Claude Code, Codex/);
    expect(run.out).toContain('llm-route serve');
    expect(run.out).toContain('llm-route exec -- claude');

    // `validate` (the real command) accepts what it wrote.
    const validate = spawn(process.execPath, [join(repoRoot, 'bin/llm-route.js'), 'validate'], {
      cwd: run.dir,
      env: { ...process.env, ANTHROPIC_API_KEY: SECRET },
      stdio: 'ignore',
    });
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

  it("nothing found: the demo's mock tiers and a note on what to install; the file validates", async () => {
    const closed = await closedPort();
    const run = await init(['--yes'], { ollama: closed, lmstudio: closed, llamacpp: closed, vllm: closed });
    expect(run.code, run.err).toBe(0);
    expect(run.out).toMatch(/nothing usable found.*install Ollama/);
    const text = readFileSync(join(run.dir, 'llm-route.yaml'), 'utf8');
    expect(text).toMatch(/# Nothing found/);
    const config = loadConfig(join(run.dir, 'llm-route.yaml'), {});
    expect(config.routes.get('chat')?.tiers.map((t) => [t.provider.base_url, t.provider.start?.command])).toEqual([
      ['http://127.0.0.1:4101/v1', 'llm-route mock --port 4101 --name local --fail-rate 0.1'],
      ['http://127.0.0.1:4102/v1', 'llm-route mock --port 4102 --name cloud'],
    ]);
    expect(run.out).toContain('serve starts the two mock tiers itself');
  }, 30_000);

  it('nothing found: `serve` starts the two mock tiers itself (their start: commands), answers through them, and stops them', async () => {
    const closed = await closedPort();
    const run = await init(['--yes'], { ollama: closed, lmstudio: closed, llamacpp: closed, vllm: closed });
    expect(run.code, run.err).toBe(0);
    // The file as written, on two free ports instead of 4101/4102 (tests may run side by side).
    const [local, cloud] = [await closedPort(), await closedPort()];
    const file = join(run.dir, 'llm-route.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replaceAll('4101', String(local)).replaceAll('4102', String(cloud)));
    const cli = buildPrivateCli();
    try {
      // `llm-route` on PATH, as after `npm link`: the start: commands run it.
      const path = [dirname(cli.bin), dirname(process.execPath), process.env.PATH].join(':');
      const serve = runCli(cli.bin, ['serve', '-c', file, '--port', '0', '--no-ui'], { PATH: path, XDG_STATE_HOME: run.dir });
      const listening = JSON.parse(await serve.waitForLine((line) => line.includes('"listening"'), 15_000)) as { url: string };
      await serve.waitForLine((line) => line.includes('"provider":"cloud"') && line.includes('ready after'), 20_000);
      await serve.waitForLine((line) => line.includes('"provider":"local"') && line.includes('ready after'), 20_000);
      let answer: Response | undefined;
      for (let i = 0; i < 5 && answer?.status !== 200; i++) {
        answer = await fetch(`${listening.url}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'anything', messages: [{ role: 'user', content: 'hi' }] }),
        });
      }
      expect(answer?.status).toBe(200);
      expect(answer?.headers.get('x-llm-route-tier')).toMatch(/^(local|cloud)$/);
      expect(((await answer!.json()) as { choices: Array<{ message: { content: string } }> }).choices[0].message.content).toMatch(/^\[(local|cloud)\]/);
      serve.child.kill('SIGINT');
      expect((await serve.exited).code).toBe(0);
      // What serve started, it stopped.
      for (const port of [local, cloud]) await expect(fetch(`http://127.0.0.1:${port}/v1/models`)).rejects.toThrow();
    } finally {
      cli.remove();
    }
  }, 60_000);

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

  it("a Gemini key (GEMINI_API_KEY, or Google's GOOGLE_API_KEY) is a gemini tier on Gemini's own API, its variable referenced", async () => {
    const closed = await closedPort();
    const keys = { GOOGLE_API_KEY: `${SECRET}-google` };
    const run = await init(['--yes'], { ollama: closed, lmstudio: closed, llamacpp: closed, vllm: closed }, keys);
    expect(run.code, run.err).toBe(0);
    const text = readFileSync(join(run.dir, 'llm-route.yaml'), 'utf8');
    expect(text + run.out + run.err).not.toContain(SECRET);
    expect(text).toContain('api_key: ${GOOGLE_API_KEY}');
    expect(run.out).toContain('found $GOOGLE_API_KEY: a gemini tier (gemini-2.5-flash)');
    const [tier] = loadConfig(join(run.dir, 'llm-route.yaml'), keys).routes.get('chat')?.tiers ?? [];
    expect(tier.provider).toMatchObject({ type: 'gemini', base_url: 'https://generativelanguage.googleapis.com', api_key: `${SECRET}-google` });
    expect(tier.model).toBe('gemini-2.5-flash');
    expect(tier.price).toMatchObject({ input_per_mtok: 0.3, output_per_mtok: 2.5 });
  }, 30_000);

  it("honours OLLAMA_HOST (as Ollama reads it) and llama-server's LLAMA_ARG_PORT, and says where it asked", async () => {
    const ollama = await serverOf(ollamaTags(['llama3.2:latest']));
    const llama = await serverOf(llamaCppServer('tiny.gguf'));
    const closed = await closedPort();
    // Only LM Studio and vLLM are pinned by LLM_ROUTE_INIT_PORTS: Ollama and llama.cpp come from their own variables.
    const run = await init(['--yes'], { lmstudio: closed, vllm: closed }, { OLLAMA_HOST: `0.0.0.0:${ollama.port}`, LLAMA_ARG_PORT: String(llama.port) });
    expect(run.code, run.err).toBe(0);
    expect(run.out).toContain(`ollama: asking http://127.0.0.1:${ollama.port} (from $OLLAMA_HOST)`);
    expect(run.out).toContain(`llamacpp: asking http://127.0.0.1:${llama.port} (from $LLAMA_ARG_PORT)`);
    const config = loadConfig(join(run.dir, 'llm-route.yaml'), {});
    expect(config.routes.get('chat')?.tiers.map((t) => [t.name, t.provider.base_url])).toEqual([
      ['ollama', `http://127.0.0.1:${ollama.port}`],
      ['llama-cpp', `http://127.0.0.1:${llama.port}/v1`],
    ]);
  }, 30_000);

  it('LLM_ROUTE_INIT_PORTS wins over OLLAMA_HOST; an OLLAMA_HOST with a scheme is read as a URL', async () => {
    const ollama = await serverOf(ollamaTags(['llama3.2:latest']));
    const closed = await closedPort();
    const pinned = await init(['--yes'], { ollama: closed, lmstudio: closed, llamacpp: closed, vllm: closed }, { OLLAMA_HOST: `127.0.0.1:${ollama.port}` });
    expect(pinned.out).not.toContain('from $OLLAMA_HOST');
    expect(pinned.out).toMatch(/nothing usable found/);
    const url = await init(['--yes'], { lmstudio: closed, llamacpp: closed, vllm: closed }, { OLLAMA_HOST: `http://localhost:${ollama.port}/` });
    expect(url.code, url.err).toBe(0);
    expect(loadConfig(join(url.dir, 'llm-route.yaml'), {}).routes.get('chat')?.tiers[0].provider.base_url).toBe(`http://localhost:${ollama.port}`);
  }, 30_000);

  it('"nothing found" and --help name the variables that say where to look; English articles', async () => {
    const closed = await closedPort();
    const run = await init(['--yes'], { ollama: closed, lmstudio: closed, llamacpp: closed, vllm: closed });
    for (const name of ['OLLAMA_HOST', 'LLAMA_ARG_PORT', 'LLM_ROUTE_INIT_HOST', 'LLM_ROUTE_INIT_PORTS', 'llm-route init --help'])
      expect(run.out).toContain(name);
    const help = await init(['--help'], {});
    expect(help.code).toBe(0);
    for (const name of ['OLLAMA_HOST', 'LLAMA_ARG_HOST', 'LLAMA_ARG_PORT', 'LLM_ROUTE_INIT_HOST', 'LLM_ROUTE_INIT_PORTS', 'ANTHROPIC_API_KEY'])
      expect(help.out).toContain(name);
    const keyed = await init(['--yes'], { ollama: closed, lmstudio: closed, llamacpp: closed, vllm: closed }, { OPENAI_API_KEY: SECRET, GROQ_API_KEY: SECRET });
    expect(keyed.out).toContain('found $OPENAI_API_KEY: an openai tier');
    expect(keyed.out).toContain('found $GROQ_API_KEY: a groq tier');
    expect(keyed.out).not.toMatch(/\ba [aeiou]/);
  }, 30_000);

  it('the file explains its catch-all alias: a typo is answered too, and how to refuse unknown names', async () => {
    const closed = await closedPort();
    const run = await init(['--yes'], { ollama: closed, lmstudio: closed, llamacpp: closed, vllm: closed }, { OPENAI_API_KEY: SECRET });
    const text = readFileSync(join(run.dir, 'llm-route.yaml'), 'utf8');
    expect(text).toContain('aliases: ["*"]');
    expect(text).toMatch(/a typo like "caht" too: it is answered, and the log says once per name/);
    expect(text).toContain('aliases: ["claude-*", "gpt-*"]');
  }, 30_000);
});
