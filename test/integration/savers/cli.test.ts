import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import { contentTokens } from '../../../src/savers/view.js';
import { buildPrivateCli, repoRoot, runCli } from '../../helpers/cli.js';

const FIXTURES = join(repoRoot, 'test/fixtures/savers');
const CONFIG = join(FIXTURES, 'llm-route.yaml');
const fixture = (name: string) => join(FIXTURES, name);
const bodyOf = (name: string) => JSON.parse(readFileSync(fixture(name), 'utf8')) as Record<string, unknown>;

let cli: ReturnType<typeof buildPrivateCli>;
let dir: string;

beforeAll(() => {
  cli = buildPrivateCli();
  dir = mkdtempSync(join(tmpdir(), 'llm-route-savers-'));
}, 60_000);

afterAll(() => {
  cli?.remove();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function savers(...args: string[]) {
  const run = runCli(cli.bin, ['savers', 'try', ...args]);
  const { code } = await run.exited;
  return { code, stdout: run.lines.join('\n'), stderr: run.stderr() };
}

describe('llm-route savers try', () => {
  it('--json: exactly {route, before, after, savers:[{saver, before, after, diff}]}, measured with the real tokenizer', async () => {
    const { code, stdout, stderr } = await savers(fixture('chat-agent.json'), '-c', CONFIG, '--json');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    expect(Object.keys(report)).toEqual(['route', 'before', 'after', 'savers']);
    expect(report.route).toBe('agent'); // from the body's "model"
    expect(report.before).toBe(contentTokens('chat', bodyOf('chat-agent.json'), o200k));
    expect(report.savers.map((s: Record<string, unknown>) => Object.keys(s))).toEqual(Array(5).fill(['saver', 'before', 'after', 'diff']));
    expect(report.savers.map((s: { saver: string }) => s.saver)).toEqual([
      'whitespace',
      'dedupe_system',
      'minify_tool_json',
      'truncate_tool_output',
      'trim_history',
    ]);
    expect(report.savers[0].before).toBe(report.before);
    expect(report.savers.at(-1).after).toBe(report.after);
    for (let i = 1; i < 5; i++) expect(report.savers[i].before).toBe(report.savers[i - 1].after);
    expect(report.after).toBeLessThan(report.before / 5); // the 60-line log is cut to 64 tokens
    expect(report.savers[1].diff).toMatch(/messages\[1\]\.content \(system, dropped\)/);
    expect(report.savers[2].diff).toContain('+ "{\\"name\\":\\"app\\",\\"scripts\\":{\\"build\\":\\"tsc -p .\\"},\\"version\\":\\"1.0.0\\"}"');
    expect(report.savers[3].diff).toMatch(/\+ "\[\.\.\. \d+ tokens truncated \.\.\.\]"/);
    expect(report.savers[4]).toEqual({ saver: 'trim_history', before: report.after, after: report.after, diff: '' });
  });

  it('the text report: each saver, its tokens before and after, and its diff', async () => {
    const { code, stdout } = await savers(fixture('chat-agent.json'), '-c', CONFIG);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^route agent \(chat body, o200k_base\): \d+ → \d+ tokens \(saved \d+, \d+\.\d%\)/);
    expect(stdout).toMatch(/\nwhitespace {12}\d+ → \d+ \(saved \d+, /);
    expect(stdout).toContain('    - "Why   does the build fail?"\n    + "Why does the build fail?"');
    expect(stdout).toMatch(/trim_history {10}\d+ → \d+ \(saved 0\) \d+\.\d ms\n {2}\(nothing to change\)/);
  });

  it("an Anthropic body, measured with the encoding of the route's first tier (cl100k_base)", async () => {
    const { code, stdout } = await savers(fixture('messages-claude.json'), '-c', CONFIG, '--json');
    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    expect(report.route).toBe('claude');
    expect(report.before).toBe(contentTokens('messages', bodyOf('messages-claude.json'), cl100k));
    expect(report.savers[0].diff).toContain('~ messages[0].content');
    expect(report.savers[2].diff).toContain('~ messages[2].content[0].content');
  });

  it('--route picks the route; a route with `savers: []` changes nothing', async () => {
    const { code, stdout } = await savers(fixture('responses.json'), '-c', CONFIG, '--route', 'plain', '--json');
    expect(code).toBe(0);
    const tokens = contentTokens('responses', bodyOf('responses.json'), o200k);
    expect(JSON.parse(stdout)).toEqual({ route: 'plain', before: tokens, after: tokens, savers: [] });
  });

  it('exit 2 with a clear line: not a request body, not JSON, an unknown route, a body naming no route', async () => {
    const notJson = join(dir, 'broken.json');
    writeFileSync(notJson, '{"messages": [');
    const cases: Array<[string[], RegExp]> = [
      [
        [fixture('not-a-body.json')],
        /not-a-body\.json is not a request body: expected "messages" \(Chat Completions, Anthropic Messages\) or "input" \(OpenAI Responses\)/,
      ],
      [[notJson], /broken\.json is not a request body: it is not JSON/],
      [[join(dir, 'missing.json')], /cannot read .*missing\.json/],
      [[fixture('chat-agent.json'), '--route', 'agnet'], /unknown route "agnet"; did you mean "agent"\?/],
      [[fixture('responses.json')], /unknown route: the body's "model" \("other"\) names no route; pass --route \(routes: agent, claude, plain\)/],
    ];
    for (const [args, message] of cases) {
      const { code, stdout, stderr } = await savers(...args, '-c', CONFIG);
      expect(code, args.join(' ')).toBe(2);
      expect(stdout).toBe('');
      expect(stderr).toMatch(new RegExp(`^llm-route savers try: (?:\\S*/)?${message.source}[^\n]*\n$`));
    }
  });

  it('a tier file with a bad saver: exit 2 with file:line:col', async () => {
    const config = join(dir, 'bad.yaml');
    writeFileSync(config, readFileSync(CONFIG, 'utf8').replace('  - dedupe_system', '  - dedupe_sytem'));
    const { code, stderr } = await savers(fixture('chat-agent.json'), '-c', config);
    expect(code).toBe(2);
    expect(stderr).toBe(`${config}:6:5: unknown saver "dedupe_sytem"; did you mean "dedupe_system"? (at savers[1])\n`);
  });
});
