import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { loadConfigText } from '../../../src/config/load.js';
import { repoRoot } from '../../helpers/cli.js';
import { completion, healthyStream } from '../../helpers/fake-upstream.js';
import { useHarness } from '../../helpers/harness.js';
import type { RunningProxy } from '../../helpers/proxy.js';

/**
 * The recipes for pointing a client at llm-route, in the README and in docs/, wherever they stand,
 * run as written against a running proxy (only its address put in place of 127.0.0.1:4141): each
 * SDK snippet as a module of its own with the real `openai`, `@anthropic-ai/sdk` and `@google/genai` (a block that
 * leans on another's variables fails; one that prints nothing of an answer it asked for fails),
 * each line of environment variables with a bare SDK client that reads them and nothing else
 * (the Claude Code line with Anthropic's SDK, which reads the same variables; Gemini's with Google's), and each curl
 * command to a client API. The Python spellings are not run (no Python SDK here). Every tier
 * file written out whole in them loads as `serve` would load it, and an excerpt of an example
 * file says what that file says.
 */

const h = useHarness();
let dir: string;
const readmeText = readFileSync(join(repoRoot, 'README.md'), 'utf8');
const docsDir = join(repoRoot, 'docs');
/** The README and every page of docs/, by path from the repository's root. */
const pages: Array<{ path: string; text: string }> = [
  { path: 'README.md', text: readmeText },
  ...readdirSync(docsDir)
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => ({ path: `docs/${f}`, text: readFileSync(join(docsDir, f), 'utf8') })),
];
const readme = pages.slice(0, 1);
const ANSWER = 'hello';

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'llm-route-readme-snippets-'));
  symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'), 'dir');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A proxy whose one tier answers every request with ANSWER (streamed in two pieces, or whole). */
async function answeringProxy(): Promise<RunningProxy> {
  const up = await h.fake();
  const stream = healthyStream(['hel', 'lo']);
  up.always((ctx) => (ctx.body.stream ? stream(ctx) : ctx.json(200, completion(ANSWER))));
  return h.proxy({ tiers: [{ name: 'local', url: up.url }] });
}

const atProxy = (text: string, p: RunningProxy): string => text.replaceAll('http://127.0.0.1:4141', p.origin).replaceAll('localhost:4141', p.origin);
const requests = (p: RunningProxy) => p.logs.filter((l) => l.event === 'request');

/** The fenced blocks of a language in these pages (a fence on a line of its own, indented in a list too). */
function fenced(lang: string, from = pages): string[] {
  return from.flatMap(({ text }) => [...text.matchAll(new RegExp(`^ *\`\`\`${lang}\n([\\s\\S]*?)^ *\`\`\` *$`, 'gm'))].map((m) => m[1]));
}

const SDK_IMPORT = /from '(openai|@anthropic-ai\/sdk|@google\/genai)'/;

/** The ```ts blocks that use an SDK. */
function sdkSnippets(from = pages): string[] {
  return fenced('ts', from).filter((block) => SDK_IMPORT.test(block));
}

/** Inline code and sh lines that set a client's *_BASE_URL: `VAR=value VAR=value [command]`, `export …` too. */
function envRecipes(from = pages): Array<{ recipe: string; vars: Record<string, string> }> {
  const prose = from.map(({ text }) => text.replace(/^ *```[a-z]*\n[\s\S]*?^ *``` *$/gm, '')).join('\n\n');
  const inline = [...prose.matchAll(/(?<!`)(`+)(?!`)([\s\S]+?)(?<!`)\1(?!`)/g)].map((m) => m[2].replace(/\s*\n\s*/g, ' '));
  const shLines = fenced('sh', from).flatMap((block) => block.split('\n').map((line) => line.replace(/\s+#.*$/, '').trim()));
  const recipes: Array<{ recipe: string; vars: Record<string, string> }> = [];
  for (const recipe of [...inline, ...shLines]) {
    const assignments = /^(?:export )?((?:[A-Z_]+=\S+(?: |$))+)/.exec(recipe)?.[1];
    if (!assignments || !/_BASE_URL=/.test(assignments)) continue;
    recipes.push({
      recipe,
      vars: Object.fromEntries(
        assignments
          .trim()
          .split(/ +/)
          .map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]),
      ),
    });
  }
  return recipes;
}

/** The curl commands of the ```sh blocks to a client API (a `\` continues a command on the next line). */
function curlRecipes(api = /^curl .*\/v1\/(chat\/completions|responses|messages)\b/, from = pages): string[] {
  const commands = fenced('sh', from).flatMap((block) =>
    block
      .split('\n')
      .map((line) => line.trim())
      .join('\n')
      .replace(/\\\n/g, ' ')
      .split('\n'),
  );
  return commands.filter((command) => api.test(command));
}

function run(command: string, args: string[], env?: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(command, args, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += String(d)));
  child.stderr.on('data', (d) => (err += String(d)));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out, err })));
}

const count = (text: string, word: string): number => text.split(word).length - 1;

/** A client that reads only its SDK's variables, asks once and prints the answer's text. */
const BARE_CLIENTS = {
  anthropic:
    "import Anthropic from '@anthropic-ai/sdk';\nconst m = await new Anthropic({ maxRetries: 0 }).messages.create({ model: 'chat', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });\nconsole.log(m.content[0].text);\n",
  gemini:
    "import { GoogleGenAI } from '@google/genai';\nconst r = await new GoogleGenAI({}).models.generateContent({ model: 'chat', contents: 'hi' });\nconsole.log(r.text);\n",
  openai:
    "import OpenAI from 'openai';\nconst c = await new OpenAI({ maxRetries: 0 }).chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] });\nconsole.log(c.choices[0].message.content);\n",
};

describe("the README's and docs/' recipes for clients, run as written", () => {
  it('each SDK block runs on its own and prints every answer it asks for; the README has one for each SDK', async () => {
    const p = await answeringProxy();
    const inReadme = sdkSnippets(readme);
    expect(inReadme.map((b) => SDK_IMPORT.exec(b)?.[1])).toEqual(['openai', '@anthropic-ai/sdk', '@google/genai']);
    // The README's come first (pages lists it first): their requests are the first ones.
    const blocks = sdkSnippets();
    expect(blocks.slice(0, inReadme.length)).toEqual(inReadme);
    let readmeAsked: string[] = [];
    for (const [i, block] of blocks.entries()) {
      const before = requests(p).length;
      const file = join(dir, `snippet-${i}.mjs`);
      writeFileSync(file, atProxy(block, p));
      const ran = await run(process.execPath, [file]);
      expect(ran.code, `block ${i}:\n${block}\n${ran.err}`).toBe(0);
      const asked = requests(p).length - before;
      expect(asked).toBeGreaterThan(0);
      expect(count(ran.out, ANSWER), `block ${i} printed:\n${ran.out}`).toBe(asked);
      if (i === inReadme.length - 1) readmeAsked = requests(p).map((l) => String(l.protocol));
    }
    // The OpenAI block streams a chat and asks Responses; the Anthropic block asks Messages; Google's, Gemini's API.
    expect(readmeAsked.sort()).toEqual(['chat', 'gemini', 'messages', 'responses']);
  }, 60_000);

  it("each line of environment variables is all a bare SDK client needs (no key of the user's)", async () => {
    const p = await answeringProxy();
    const recipes = envRecipes();
    const named = (v: string, from = recipes) => from.filter((r) => v in r.vars).length;
    const inReadme = envRecipes(readme);
    expect(named('OPENAI_BASE_URL', inReadme)).toBeGreaterThanOrEqual(1); // the OpenAI SDKs by environment
    expect(named('ANTHROPIC_BASE_URL', inReadme)).toBeGreaterThanOrEqual(2); // Claude Code by hand, the Anthropic SDK by environment
    expect(named('OPENAI_BASE_URL')).toBeGreaterThanOrEqual(2); // and docs/clients.md's
    expect(named('GOOGLE_GEMINI_BASE_URL', inReadme)).toBeGreaterThanOrEqual(1); // Google's SDK by environment
    for (const { recipe, vars } of recipes) {
      const sdk = 'ANTHROPIC_BASE_URL' in vars ? 'anthropic' : 'GOOGLE_GEMINI_BASE_URL' in vars ? 'gemini' : 'openai';
      const file = join(dir, `bare-${sdk}.mjs`);
      writeFileSync(file, BARE_CLIENTS[sdk]);
      // Only what the recipe sets (and PATH, HOME): never a key from this machine's environment.
      const env = { PATH: process.env.PATH, HOME: dir, ...Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, atProxy(v, p)])) };
      const ran = await run(process.execPath, [file], env);
      expect(ran.code, `${recipe}\n${ran.err}`).toBe(0);
      expect(ran.out.trim(), recipe).toBe(ANSWER);
    }
  }, 60_000);

  it('each curl command to a client API runs as written and is answered; the README covers Chat Completions, Responses and Messages', async () => {
    const p = await answeringProxy();
    const inReadme = curlRecipes(undefined, readme);
    const apis = (commands: string[]) => new Set(commands.map((c) => /\/v1\/(chat\/completions|responses|messages)\b/.exec(c)?.[1]));
    expect(apis(inReadme)).toEqual(new Set(['chat/completions', 'responses', 'messages']));
    for (const command of curlRecipes()) {
      const before = requests(p).length;
      const ran = await run('sh', ['-c', atProxy(command, p)]);
      expect(ran.code, `${command}\n${ran.err}`).toBe(0);
      const answered = requests(p).slice(before);
      expect(
        answered.map((l) => l.status),
        command,
      ).toEqual([200]);
      // The answer's text, streamed in pieces or whole.
      expect(ran.out.includes(ANSWER) || (ran.out.includes('"hel"') && ran.out.includes('"lo"')), `${command}\n${ran.out}`).toBe(true);
    }
    expect(new Set(requests(p).map((l) => l.protocol))).toEqual(new Set(['chat', 'responses', 'messages']));
  }, 60_000);

  it("each curl command to Ollama's API runs as written (no content type, as Ollama's own examples send) and is answered", async () => {
    const p = await answeringProxy();
    expect(curlRecipes(/^curl .*\/api\/(chat|generate)\b/, readme).length).toBeGreaterThan(0);
    const commands = curlRecipes(/^curl .*\/api\/(chat|generate)\b/);
    for (const command of commands) {
      const ran = await run('sh', ['-c', atProxy(command, p)]);
      expect(ran.code, `${command}\n${ran.err}`).toBe(0);
      const lines = ran.out
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(lines.map((line) => line.message?.content ?? line.response).join(''), command).toBe(ANSWER);
      expect(lines.at(-1)).toMatchObject({ done: true, done_reason: 'stop' });
    }
    expect(new Set(requests(p).map((l) => l.protocol))).toEqual(new Set(['ollama']));
  }, 60_000);

  it("each curl command to Gemini's API runs as written and is answered; the README has one", async () => {
    const p = await answeringProxy();
    const gemini = /^curl .*\/v1(beta)?\/models\/[^ ']*:(generateContent|streamGenerateContent)/;
    expect(curlRecipes(gemini, readme).length).toBeGreaterThan(0);
    for (const command of curlRecipes(gemini)) {
      const ran = await run('sh', ['-c', atProxy(command, p)]);
      expect(ran.code, `${command}\n${ran.err}`).toBe(0);
      expect(ran.out.includes(ANSWER) || (ran.out.includes('"hel"') && ran.out.includes('"lo"')), `${command}\n${ran.out}`).toBe(true);
    }
    expect(new Set(requests(p).map((l) => l.protocol))).toEqual(new Set(['gemini']));
  }, 60_000);

  it("the demo's capture shows the address the text gives (127.0.0.1:4141)", () => {
    const headers = readmeText.split('\n').filter((line) => /^llm-route {2}http:\/\//.test(line));
    expect(headers.length).toBeGreaterThan(0);
    for (const header of headers) expect(header).toMatch(/^llm-route {2}http:\/\/127\.0\.0\.1:4141 /);
  });
});

/** Placeholders for the ${VAR}s a block names (a key's value is never needed to load a file). */
function placeholders(text: string): Record<string, string> {
  return Object.fromEntries([...text.matchAll(/\$\{([A-Z0-9_]+)\}/g)].map((m) => [m[1], `example-${m[1].toLowerCase()}`]));
}

/** The ```yaml blocks of each page with their line, parsed (null: not YAML a tier file could be). */
function yamlBlocks(): Array<{ where: string; text: string; doc: Record<string, unknown> | null; before: string }> {
  return pages.flatMap(({ path, text }) =>
    [...text.matchAll(/^ *```yaml\n([\s\S]*?)^ *``` *$/gm)].map((m) => {
      const block = m[1];
      const parsed: unknown = parseYaml(block);
      const line = text.slice(0, m.index).split('\n').length;
      // The prose just above the block: where an excerpt names its example file.
      const before = text.slice(Math.max(0, m.index - 300), m.index);
      return { where: `${path}:${line}`, text: block, doc: isRecord(parsed) ? parsed : null, before };
    }),
  );
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

describe("the README's and docs/' tier files", () => {
  it('every tier file written out whole (version, providers, routes) loads as serve loads it', () => {
    const whole = yamlBlocks().filter(({ doc }) => doc && 'version' in doc && 'providers' in doc && 'routes' in doc);
    expect(whole.map((b) => b.where.split(':')[0])).toEqual(expect.arrayContaining(['README.md', 'docs/tier-file.md']));
    for (const { where, text } of whole) {
      expect(() => loadConfigText(text, join(repoRoot, 'llm-route.yaml'), placeholders(text)), where).not.toThrow();
    }
  });

  it('an excerpt of an examples/ file says what that file says', () => {
    const excerpts = yamlBlocks().flatMap((block) => {
      const named = /examples\/([\w-]+\.yaml)[^\n]*(?:the parts that matter|shortened)/.exec(block.before)?.[1];
      return named && block.doc ? [{ ...block, file: named }] : [];
    });
    expect(excerpts.map((e) => `${e.where.split(':')[0]} ${e.file}`)).toEqual(
      expect.arrayContaining(['README.md claude-code.yaml', 'docs/client-credentials.md claude-code-subscription.yaml']),
    );
    for (const { where, doc, file } of excerpts) {
      const example: unknown = parseYaml(readFileSync(join(repoRoot, 'examples', file), 'utf8'));
      expect(example, `${where}: examples/${file}`).toMatchObject(doc as Record<string, unknown>);
    }
  });
});
