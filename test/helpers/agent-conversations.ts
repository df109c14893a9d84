/**
 * Agent conversations in the shapes real agents send them, turn by turn: each turn's body is
 * the whole conversation so far plus one new step, as Claude Code (Messages), Codex
 * (Responses), a Chat Completions agent and Gemini CLI send it. What changes between two turns is only
 * what those clients change: Claude Code's billing line gets a new nonce and its cache_control
 * breakpoint moves to the newest message; Codex keeps its prompt_cache_key.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './build.js';

type Body = Record<string, unknown>;

/** Claude Code's billing line (2.1.177's shape, github.com/anthropics/claude-code/issues/68900), with its per-request nonce. */
export function billingLine(nonce: string): string {
  return `x-anthropic-billing-header: cc_version=2.1.177.01c; cc_entrypoint=sdk-cli; cch=${nonce};`;
}

export const CLAUDE_CODE_IDENTITY = "You are Claude Code, Anthropic's official CLI for Claude.";

/** A system prompt of about `tokens` tokens (≈ 4.6 characters a token), in the style of Claude Code's. */
export function agentSystemPrompt(tokens = 300): string {
  const rules = [
    'You are an interactive CLI tool that helps users with software engineering tasks.',
    'Use the instructions below and the tools available to you to assist the user.',
    'IMPORTANT: Assist with defensive security tasks only.',
    'When you run a non-trivial bash command, explain what the command does and why you are running it.',
    'Prefer editing existing files to creating new ones; never create documentation files unless asked.',
    'Keep your answers short: fewer than four lines unless the user asks for detail.',
    'Before you change code, read the surrounding code and follow its conventions and libraries.',
    'Run the project lint and typecheck commands when you are done with a task, if you know them.',
  ];
  const lines: string[] = ['', '# Tone and style'];
  for (let i = 0; lines.join('\n').length < tokens * 4.6; i++) lines.push(`${i + 1}. ${rules[i % rules.length]} (rule ${i + 1})`);
  return lines.join('\n');
}

const SCHEMA = 'http://json-schema.org/draft-07/schema#';
const tool = (name: string, description: string, properties: Record<string, unknown>, required: string[]): Body => ({
  name,
  description,
  input_schema: { type: 'object', properties, required, additionalProperties: false, $schema: SCHEMA },
});

/** Claude Code's eight everyday tools, as it declares them (input_schema with $schema last). */
export const CLAUDE_CODE_TOOLS: Body[] = [
  tool(
    'Bash',
    'Executes a given bash command in a persistent shell session with optional timeout.',
    {
      command: { type: 'string', description: 'The command to execute' },
      timeout: { type: 'number', description: 'Optional timeout in milliseconds (max 600000)' },
      description: { type: 'string', description: 'Clear, concise description of what this command does in 5-10 words' },
    },
    ['command'],
  ),
  tool('Glob', 'Fast file pattern matching tool that works with any codebase size.', { pattern: { type: 'string' }, path: { type: 'string' } }, ['pattern']),
  tool(
    'Grep',
    'A powerful search tool built on ripgrep.',
    { pattern: { type: 'string' }, path: { type: 'string' }, output_mode: { type: 'string', enum: ['content', 'files_with_matches', 'count'] } },
    ['pattern'],
  ),
  tool('Read', 'Reads a file from the local filesystem.', { file_path: { type: 'string' }, offset: { type: 'number' }, limit: { type: 'number' } }, [
    'file_path',
  ]),
  tool(
    'Edit',
    'Performs exact string replacements in files.',
    { file_path: { type: 'string' }, old_string: { type: 'string' }, new_string: { type: 'string' }, replace_all: { type: 'boolean', default: false } },
    ['file_path', 'old_string', 'new_string'],
  ),
  tool('Write', 'Writes a file to the local filesystem.', { file_path: { type: 'string' }, content: { type: 'string' } }, ['file_path', 'content']),
  tool(
    'TodoWrite',
    'Use this tool to create and manage a structured task list for your current coding session.',
    {
      todos: {
        type: 'array',
        items: {
          type: 'object',
          properties: { content: { type: 'string' }, status: { type: 'string', enum: ['pending', 'in_progress', 'completed'] } },
          required: ['content', 'status'],
        },
      },
    },
    ['todos'],
  ),
  tool(
    'WebFetch',
    'Fetches content from a specified URL and processes it using an AI model.',
    { url: { type: 'string', format: 'uri' }, prompt: { type: 'string' } },
    ['url', 'prompt'],
  ),
];

const EPHEMERAL = { type: 'ephemeral' };

/** Claude Code's message list with its one moving cache breakpoint on the newest message's last block. */
function withBreakpoint(messages: Body[]): Body[] {
  return messages.map((message, i) => {
    if (i !== messages.length - 1 || !Array.isArray(message.content)) return message;
    const content = message.content as Body[];
    return { ...message, content: content.map((block, j) => (j === content.length - 1 ? { ...block, cache_control: EPHEMERAL } : block)) };
  });
}

/** The steps of a Claude Code session: each turn adds the assistant's answer to the last and the user's next step. */
const CLAUDE_CODE_STEPS: Body[][] = [
  [
    {
      role: 'user',
      content: [
        { type: 'text', text: '<system-reminder>\nAs you answer the user, you can use the following context: # claudeMd ...\n</system-reminder>' },
        { type: 'text', text: 'The test in src/sum.test.ts fails. Fix it.' },
      ],
    },
  ],
  [
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'I should run the test first to see the failure.', signature: 'EqQBCkgIBxABGAIiQL7pYk' },
        { type: 'text', text: "I'll run the test." },
        { type: 'tool_use', id: 'toolu_01A9Xr3f', name: 'Bash', input: { command: 'npx vitest run src/sum.test.ts', description: 'Run the failing test' } },
      ],
    },
    {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_01A9Xr3f', content: 'FAIL src/sum.test.ts > adds\nexpected 3, got 4', is_error: true }],
    },
  ],
  [
    {
      role: 'assistant',
      content: [
        { type: 'tool_use', id: 'toolu_01B2Yq7k', name: 'Read', input: { file_path: '/repo/src/sum.ts' } },
        { type: 'tool_use', id: 'toolu_01C3Zp9m', name: 'Grep', input: { pattern: 'sum\\(', output_mode: 'content' } },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_01B2Yq7k', content: [{ type: 'text', text: '     1\texport const sum = (a, b) => a + b + 1;\n' }] },
        { type: 'tool_result', tool_use_id: 'toolu_01C3Zp9m', content: 'src/sum.test.ts:3:  expect(sum(1, 2)).toBe(3);' },
      ],
    },
  ],
  [
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'The + 1 is the bug.', signature: 'EqQBCkgIBxABGAIiQF9sK2' },
        {
          type: 'tool_use',
          id: 'toolu_01D4Wn2j',
          name: 'Edit',
          input: { file_path: '/repo/src/sum.ts', old_string: 'a + b + 1', new_string: 'a + b' },
        },
      ],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01D4Wn2j', content: 'The file /repo/src/sum.ts has been updated.' }] },
  ],
  [
    { role: 'assistant', content: [{ type: 'text', text: 'Fixed: `sum` added 1. The test passes now.' }] },
    { role: 'user', content: [{ type: 'text', text: 'Thanks. Now commit it.' }] },
  ],
];

export interface ClaudeCodeOptions {
  /** The billing nonce of each turn (default: a new one each turn, as several Claude Code versions do). */
  nonces?: string[];
  /** The size of the system prompt in tokens (default ~300). */
  systemTokens?: number;
  /** How many turns (default all five). */
  turns?: number;
  stream?: boolean;
}

/** The bodies of a Claude Code session's turns 1..N. */
export function claudeCodeTurns(options: ClaudeCodeOptions = {}): Body[] {
  const count = options.turns ?? CLAUDE_CODE_STEPS.length;
  const prompt = agentSystemPrompt(options.systemTokens);
  const bodies: Body[] = [];
  const messages: Body[] = [];
  for (let turn = 0; turn < count; turn++) {
    messages.push(...CLAUDE_CODE_STEPS[turn]);
    const nonce = options.nonces?.[turn] ?? (0x36ee5 + turn * 0x1f3d1).toString(16).slice(-5);
    bodies.push({
      model: 'claude-sonnet-4-5-20250929',
      messages: withBreakpoint(messages),
      system: [
        { type: 'text', text: billingLine(nonce) },
        { type: 'text', text: CLAUDE_CODE_IDENTITY, cache_control: EPHEMERAL },
        { type: 'text', text: prompt, cache_control: EPHEMERAL },
      ],
      tools: CLAUDE_CODE_TOOLS,
      metadata: { user_id: 'user_5f1d0c3b_account__session_4b9f2c1e-7a3d-4e8b-9c6f-1d2e3f4a5b6c' },
      max_tokens: 32000,
      thinking: { type: 'enabled', budget_tokens: 4000 },
      stream: options.stream ?? true,
    });
  }
  return bodies;
}

const fn = (name: string, description: string, properties: Record<string, unknown>, required: string[]): Body => ({
  type: 'function',
  name,
  description,
  strict: false,
  parameters: { type: 'object', properties, required, additionalProperties: false },
});

const CODEX_TOOLS: Body[] = [
  fn('shell', 'Runs a shell command and returns its output.', { command: { type: 'array', items: { type: 'string' } }, workdir: { type: 'string' } }, [
    'command',
  ]),
  fn('update_plan', 'Updates the task plan.', { plan: { type: 'array', items: { type: 'object' } } }, ['plan']),
  fn('apply_patch', 'Use the `apply_patch` tool to edit files.', { input: { type: 'string' } }, ['input']),
];

const text = (role: string, value: string): Body => ({
  type: 'message',
  role,
  content: [{ type: role === 'assistant' ? 'output_text' : 'input_text', text: value }],
});

/** The steps of a Codex session (input items), the first with its developer and environment context. */
const CODEX_STEPS: Body[][] = [
  [
    text('developer', '<permissions instructions>\nFilesystem sandboxing: workspace-write.\n</permissions instructions>'),
    text('user', '# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nRun npm test before you finish.\n</INSTRUCTIONS>'),
    text('user', '<environment_context>\n  <cwd>/repo</cwd>\n  <shell>bash</shell>\n  <current_date>2026-03-02</current_date>\n</environment_context>'),
    text('user', 'fix the failing test'),
  ],
  [
    { type: 'reasoning', id: 'rs_0a1b', summary: [{ type: 'summary_text', text: '**Running the tests**' }], content: null, encrypted_content: null },
    { type: 'function_call', id: 'fc_0a1c', name: 'shell', arguments: '{"command":["bash","-lc","npm test"],"workdir":"/repo"}', call_id: 'call_Q1w2E3' },
    { type: 'function_call_output', call_id: 'call_Q1w2E3', output: 'FAIL sum.test.ts\nexpected 3, got 4' },
  ],
  [
    { type: 'function_call', id: 'fc_0a1d', name: 'apply_patch', arguments: '{"input":"*** Begin Patch\\n*** End Patch"}', call_id: 'call_R4t5Y6' },
    { type: 'function_call_output', call_id: 'call_R4t5Y6', output: 'Success. Updated the following files:\nM src/sum.ts' },
  ],
  [text('assistant', 'Fixed the off-by-one in `sum`.'), text('user', 'great, commit it')],
];

/** The bodies of a Codex session's turns 1..N. */
export function codexTurns(): Body[] {
  const input: Body[] = [];
  return CODEX_STEPS.map((step) => {
    input.push(...step);
    return {
      model: 'gpt-5-codex',
      instructions: 'You are Codex, based on GPT-5. You are running as a coding agent in the Codex CLI on a user computer.',
      input: [...input],
      tools: CODEX_TOOLS,
      tool_choice: 'auto',
      parallel_tool_calls: false,
      reasoning: { effort: 'medium', summary: 'auto' },
      store: false,
      stream: true,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: '0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
    };
  });
}

/** The steps of a Chat Completions agent's session. */
const CHAT_STEPS: Body[][] = [
  [
    { role: 'system', content: 'You are a coding agent. Use the tools.' },
    { role: 'user', content: 'what is in the repo?' },
  ],
  [
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_a1', type: 'function', function: { name: 'shell', arguments: '{"command":"ls"}' } }] },
    { role: 'tool', tool_call_id: 'call_a1', content: 'README.md\nsrc' },
  ],
  [
    {
      role: 'assistant',
      content: 'Two entries; reading both.',
      tool_calls: [
        { id: 'call_b1', type: 'function', function: { name: 'read', arguments: '{"path":"README.md"}' } },
        { id: 'call_b2', type: 'function', function: { name: 'shell', arguments: '{"command":"ls src"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'call_b1', content: '# demo' },
    { role: 'tool', tool_call_id: 'call_b2', content: 'index.ts' },
  ],
  [
    { role: 'assistant', content: 'A demo with one source file.' },
    { role: 'user', content: [{ type: 'text', text: 'thanks' }] },
  ],
];

const CHAT_TOOLS: Body[] = [
  {
    type: 'function',
    function: { name: 'shell', description: 'Runs a command.', parameters: { type: 'object', properties: { command: { type: 'string' } } } },
  },
  { type: 'function', function: { name: 'read', description: 'Reads a file.', parameters: { type: 'object', properties: { path: { type: 'string' } } } } },
];

/** The bodies of a Chat Completions agent's turns 1..N. */
export function chatAgentTurns(): Body[] {
  const messages: Body[] = [];
  return CHAT_STEPS.map((step) => {
    messages.push(...step);
    return { model: 'gpt-4.1', messages: [...messages], tools: CHAT_TOOLS, tool_choice: 'auto', temperature: 0.2, stream: true, prompt_cache_key: 'agent-7' };
  });
}

/**
 * The bodies of Gemini CLI 0.61.0's turns 1..N: its first turn as it sent it
 * (test/fixtures/gemini-cli/turn-1.body.json), then each turn one more call of its tools and
 * the response, as it sends them (ids it made, Google's thoughtSignature on a call), and a
 * thought of the model's, then a last answer.
 */
export function geminiCliTurns(): Body[] {
  const first = JSON.parse(readFileSync(join(repoRoot, 'test/fixtures/gemini-cli/turn-1.body.json'), 'utf8')) as Body;
  const contents = [...(first.contents as Body[])];
  const turns: Body[] = [{ ...first, contents: [...contents] }];
  const steps: Array<[string, Body, string]> = [
    ['list_directory', { dir_path: '.' }, 'Directory listing for /w:\na.txt'],
    ['read_file', { file_path: 'a.txt' }, 'hello'],
    ['grep_search', { pattern: 'TODO' }, 'No matches found'],
  ];
  steps.forEach(([name, args, output], n) => {
    const id = `${name}_17966629${n}_0`;
    contents.push(
      {
        parts: [
          { text: `Looking at ${name}.`, thought: true },
          { functionCall: { id, name, args }, thoughtSignature: `c2ln${n}` },
        ],
        role: 'model',
      },
      { parts: [{ functionResponse: { id, name, response: { output } } }], role: 'user' },
    );
    turns.push({ ...first, contents: [...contents] });
  });
  contents.push({ parts: [{ text: 'Done.' }], role: 'model' }, { parts: [{ text: 'thanks' }], role: 'user' });
  turns.push({ ...first, contents: [...contents] });
  return turns;
}
