import { describe, expect, it } from 'vitest';
import { geminiToNeutral } from '../../../../src/protocols/gemini/to-neutral.js';
import type { NeutralRequest } from '../../../../src/protocols/core/neutral.js';
import { isUnsupported } from '../../../../src/protocols/core/types.js';

function neutral(body: Record<string, unknown>): NeutralRequest {
  const request = geminiToNeutral(body);
  if (isUnsupported(request)) throw new Error(request.unsupported);
  return request;
}

const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEUgAAAAEAAAABCAYAAAAfFcSJ';

describe('a Gemini body as a neutral request', () => {
  it("contents: user and model turns, thoughts as reasoning (their signatures Google's alone), images inline or by URL, the system instruction's parts", () => {
    const request = neutral({
      systemInstruction: { parts: [{ text: 'Be brief.' }, { text: 'Use tools.' }] },
      contents: [
        {
          role: 'user',
          parts: [
            { text: 'look' },
            { inlineData: { mimeType: 'image/png', data: PIXEL } },
            { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/a.jpg' } },
          ],
        },
        {
          role: 'model',
          parts: [
            { text: 'thinking…', thought: true, thoughtSignature: 'c2ln' },
            { text: 'A cat.', thoughtSignature: 'c2ln' },
          ],
        },
        { role: 'model', parts: [] },
        { parts: [{ text: 'thanks' }] },
      ],
    });
    expect(request.system).toEqual(['Be brief.', 'Use tools.']);
    expect(request.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: PIXEL } },
          { type: 'image', source: { kind: 'url', url: 'https://example.com/a.jpg' } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'thinking…' },
          { type: 'text', text: 'A cat.' },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'thanks' }] },
    ]);
    expect(JSON.stringify(request)).not.toContain('c2ln');
  });

  it("calls keep the client's ids; without ids, each gets one from its place in the conversation, and responses answer the oldest call of their name", () => {
    const request = neutral({
      contents: [
        { role: 'user', parts: [{ text: 'go' }] },
        {
          role: 'model',
          parts: [
            { functionCall: { name: 'read', args: { path: 'a' } } },
            { functionCall: { name: 'read', args: { path: 'b' } } },
            { functionCall: { id: 'mine', name: 'list', args: {} } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { id: 'mine', name: 'list', response: { output: 'a b' } } },
            { functionResponse: { name: 'read', response: { output: 'A' } } },
            { functionResponse: { name: 'read', response: { content: 'B' } } },
            { text: 'and?' },
          ],
        },
      ],
    });
    expect(request.messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'tool_call', id: 'call_0', name: 'read', arguments: '{"path":"a"}' },
          { type: 'tool_call', id: 'call_1', name: 'read', arguments: '{"path":"b"}' },
          { type: 'tool_call', id: 'mine', name: 'list', arguments: '{}' },
        ],
      },
      { role: 'tool', toolCallId: 'mine', name: 'list', content: [{ type: 'text', text: 'a b' }] },
      { role: 'tool', toolCallId: 'call_0', name: 'read', content: [{ type: 'text', text: 'A' }] },
      { role: 'tool', toolCallId: 'call_1', name: 'read', content: [{ type: 'text', text: 'B' }] },
      { role: 'user', content: [{ type: 'text', text: 'and?' }] },
    ]);
    // A response that is more than one string is its JSON.
    const other = neutral({ contents: [{ role: 'user', parts: [{ functionResponse: { name: 'x', response: { output: 'o', error: 'e' } } }] }] });
    expect(other.messages[0]).toEqual({ role: 'tool', toolCallId: 'x', name: 'x', content: [{ type: 'text', text: '{"output":"o","error":"e"}' }] });
  });

  it("tools: parameters in Gemini's Schema become JSON Schema, parametersJsonSchema (types in capitals too) as JSON Schema, tools that run at Google left out", () => {
    const request = neutral({
      contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
      tools: [
        {
          functionDeclarations: [
            { name: 'a', description: 'A', parameters: { type: 'OBJECT', properties: { n: { type: 'INTEGER', nullable: true } }, required: ['n'] } },
            { name: 'b', parametersJsonSchema: { type: 'OBJECT', properties: { s: { type: 'STRING' }, l: { type: 'array', items: { type: 'NUMBER' } } } } },
            { name: 'c' },
          ],
        },
        { googleSearch: {} },
        { codeExecution: {} },
      ],
    });
    expect(request.tools).toEqual([
      { name: 'a', description: 'A', parameters: { type: 'object', properties: { n: { type: ['integer', 'null'] } }, required: ['n'] } },
      { name: 'b', parameters: { type: 'object', properties: { s: { type: 'string' }, l: { type: 'array', items: { type: 'number' } } } } },
      { name: 'c', parameters: { type: 'object', properties: {} } },
    ]);
  });

  it.each([
    [{ mode: 'AUTO' }, 'auto', 2],
    [{ mode: 'NONE' }, 'none', 2],
    [{ mode: 'ANY' }, 'required', 2],
    [{ mode: 'ANY', allowedFunctionNames: ['b'] }, { name: 'b' }, 1],
    [{ mode: 'ANY', allowedFunctionNames: ['a', 'b'] }, 'required', 2],
    [{ mode: 'VALIDATED' }, 'auto', 2],
  ])('toolConfig %j: the choice %j, %i tools offered', (config, choice, tools) => {
    const request = neutral({
      contents: [],
      tools: [{ functionDeclarations: [{ name: 'a' }, { name: 'b' }] }],
      toolConfig: { functionCallingConfig: config },
    });
    expect(request.toolChoice).toEqual(choice);
    expect(request.tools).toHaveLength(tools);
  });

  it.each([
    [{ thinkingBudget: 0 }, 'none'],
    [{ thinkingBudget: 1024 }, 'low'],
    [{ thinkingBudget: 8192 }, 'medium'],
    [{ thinkingBudget: 24576 }, 'high'],
    [{ thinkingBudget: -1 }, undefined],
    [{ thinkingLevel: 'HIGH' }, 'high'],
    [{ thinkingLevel: 'low' }, 'low'],
    [{ thinkingLevel: 'MINIMAL' }, 'minimal'],
    [{ includeThoughts: true }, undefined],
    [{ thinkingLevel: 'constructor' }, undefined],
  ])('thinkingConfig %j: reasoning effort %s', (thinkingConfig, effort) => {
    expect(neutral({ contents: [], generationConfig: { thinkingConfig } }).reasoningEffort).toBe(effort);
  });

  it('generationConfig: sampling, cap, stops, candidates; JSON asked with or without a schema', () => {
    const request = neutral({
      contents: [],
      generationConfig: {
        temperature: 0.3,
        topP: 0.8,
        topK: 20,
        seed: 1,
        maxOutputTokens: 100,
        stopSequences: ['x'],
        candidateCount: 2,
        presencePenalty: 0.5,
        frequencyPenalty: 0.25,
        responseMimeType: 'application/json',
        responseJsonSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
      },
    });
    expect(request).toMatchObject({
      temperature: 0.3,
      topP: 0.8,
      topK: 20,
      seed: 1,
      maxTokens: 100,
      stop: ['x'],
      choices: 2,
      presencePenalty: 0.5,
      frequencyPenalty: 0.25,
      responseFormat: { type: 'json_schema', name: 'response', schema: { type: 'object', properties: { ok: { type: 'boolean' } } } },
    });
    expect(neutral({ contents: [], generationConfig: { responseMimeType: 'application/json' } }).responseFormat).toEqual({ type: 'json_object' });
    expect(neutral({ contents: [], generationConfig: { responseMimeType: 'text/plain', responseSchema: { type: 'STRING' } } }).responseFormat).toBeUndefined();
  });

  it('what only Gemini can carry is Unsupported on other tiers (the attempt skips them): a cached prompt, media other than images', () => {
    expect(geminiToNeutral({ contents: [], cachedContent: 'cachedContents/abc' })).toEqual({ unsupported: expect.stringContaining('cachedContent') });
    expect(geminiToNeutral({ contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'application/pdf', data: 'JVBER' } }] }] })).toEqual({
      unsupported: 'a application/pdf part (inlineData or fileData) needs a gemini tier',
    });
  });

  it("a countTokens body's generateContentRequest is what it counts", () => {
    const request = neutral({
      generateContentRequest: { model: 'models/x', contents: [{ role: 'user', parts: [{ text: 'count me' }] }], systemInstruction: 'sys' },
    });
    expect(request.system).toEqual(['sys']);
    expect(request.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'count me' }] }]);
  });
});
