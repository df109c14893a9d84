import { describe, expect, it } from 'vitest';
import { dedupeSystemSaver } from '../../../src/savers/dedupe-system.js';
import { run } from './helpers.js';

const RULES = 'Always answer in English and cite the file path of every snippet you quote.';
const STYLE = 'Prefer small functions with names that explain themselves over long comments.';

describe('dedupe_system', () => {
  it('a system message said twice is said once; user messages that repeat it are left alone', async () => {
    const body = {
      model: 'chat',
      messages: [
        { role: 'system', content: `${RULES}\n\n${STYLE}` },
        { role: 'user', content: `${RULES}\n\n${STYLE}` },
        { role: 'system', content: `${RULES}\n\n${STYLE}` },
        { role: 'developer', content: [{ type: 'text', text: `${STYLE}\n\nOnly new advice here, which stays.` }] },
      ],
    };
    const result = await run('chat', body, [dedupeSystemSaver()]);
    expect(result.body.messages).toEqual([
      { role: 'system', content: `${RULES}\n\n${STYLE}` },
      { role: 'user', content: `${RULES}\n\n${STYLE}` },
      { role: 'developer', content: [{ type: 'text', text: 'Only new advice here, which stays.' }] },
    ]);
    expect(result.measures[0].after).toBeLessThan(result.measures[0].before);
  });

  it('Anthropic system blocks: the first copy (with its cache_control) stays, a later copy goes; short lines and fenced blocks repeat freely', async () => {
    const fence = '```sh\nnpm test   # run it\n```';
    const body = {
      system: [
        { type: 'text', text: `## Rules\n\n${RULES}\n\n${fence}`, cache_control: { type: 'ephemeral' } },
        { type: 'text', text: `## Rules\n\n${RULES}\n\n${fence}\n\nExtra.` },
        { type: 'text', text: `${RULES}\n\n${fence}`, cache_control: { type: 'ephemeral' } },
      ],
      messages: [{ role: 'user', content: 'hi' }],
    };
    const result = await run('messages', body, [dedupeSystemSaver()]);
    expect(result.body.system).toEqual([
      { type: 'text', text: `## Rules\n\n${RULES}\n\n${fence}`, cache_control: { type: 'ephemeral' } },
      { type: 'text', text: `## Rules\n\n${fence}\n\nExtra.` },
      { type: 'text', text: fence, cache_control: { type: 'ephemeral' } },
    ]);
  });

  it('Responses: instructions repeated in a developer message', async () => {
    const body = {
      instructions: RULES,
      input: [
        { role: 'developer', content: RULES },
        { role: 'user', content: 'go' },
      ],
    };
    const result = await run('responses', body, [dedupeSystemSaver()]);
    expect(result.body).toEqual({ instructions: RULES, input: [{ role: 'user', content: 'go' }] });
  });

  it('nothing repeated: nothing changes', async () => {
    const body = {
      messages: [
        { role: 'system', content: RULES },
        { role: 'system', content: STYLE },
      ],
    };
    const result = await run('chat', body, [dedupeSystemSaver()]);
    expect(result.body).toBe(body);
    expect(result.measures[0].before).toBe(result.measures[0].after);
  });
});
