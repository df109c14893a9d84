import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { identifyClient, requestClass } from '../../../src/rules/client-class.js';
import { repoRoot } from '../../helpers/cli.js';

const FIXTURES = join(repoRoot, 'test/fixtures/gemini-cli');
const body = (name: string) => JSON.parse(readFileSync(join(FIXTURES, `${name}.body.json`), 'utf8')) as Record<string, unknown>;
const AGENT = { 'user-agent': 'GeminiCLI-tui/0.61.0/local (linux; x64; terminal)' };

describe("Gemini CLI's requests as classes", () => {
  it('its user-agent names it, with or without a client name', () => {
    expect(identifyClient(AGENT)).toBe('gemini-cli');
    expect(identifyClient({ 'user-agent': 'GeminiCLI/0.61.0/gemini-2.5-pro (darwin; arm64; terminal)' })).toBe('gemini-cli');
    expect(identifyClient({ 'user-agent': 'google-genai-sdk/2.32.0 gl-node/v20' })).toBe('other');
  });

  it('its classifier (a whole answer offering no function) is background, its turns main (captured from 0.61.0)', () => {
    expect(requestClass('gemini-cli', AGENT, { model: 'local', body: body('classifier'), stream: false })).toBe('background');
    expect(requestClass('gemini-cli', AGENT, { model: 'local', body: body('turn-1'), stream: true })).toBe('main');
    expect(requestClass('gemini-cli', AGENT, { model: 'local', body: body('turn-2'), stream: true })).toBe('main');
  });

  it('its history compression stays main, an agent of its own (offered complete_task) is a subagent, the model name exec gives a class wins', () => {
    const compression = {
      systemInstruction: {
        parts: [{ text: '\nYou are a specialized system component responsible for distilling chat history into a structured XML <state_snapshot>.' }],
      },
      contents: [{ role: 'user', parts: [{ text: 'Generate a new <state_snapshot> based on the provided history.' }] }],
    };
    expect(requestClass('gemini-cli', AGENT, { model: 'local', body: compression, stream: false })).toBe('main');
    const agent = { contents: [], tools: [{ functionDeclarations: [{ name: 'read_file' }, { name: 'complete_task' }] }] };
    expect(requestClass('gemini-cli', AGENT, { model: 'local', body: agent, stream: true })).toBe('subagent');
    expect(requestClass('gemini-cli', AGENT, { model: 'local@background', body: body('turn-1'), stream: true })).toBe('background');
  });
});
