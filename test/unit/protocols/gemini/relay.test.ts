import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../../src/config/load.js';
import type { Tier } from '../../../../src/config/schema.js';
import { SKIP_SIGNATURE } from '../../../../src/protocols/gemini/thought-signatures.js';
import { geminiWire } from '../../../../src/protocols/gemini/wire.js';

// A Gemini client's own body relayed to a gemini tier: the model in the path the tier's, its
// signatures untouched, the documented one added only where a call has none.

const config = loadConfigText(
  `
version: 1
providers:
  gemini: { type: gemini, base_url: "https://generativelanguage.googleapis.com", api_key: AIza-k }
routes:
  r:
    tiers:
      - { name: gemini, provider: gemini, model: gemini-2.5-pro, max_tokens: 1000 }
      - { name: tuned, provider: gemini, model: tunedModels/my-model-7 }
`,
  '/t/llm-route.yaml',
  {},
);
const [tier, tuned] = config.routes.get('r')?.tiers ?? ([] as Tier[]);

const signedTurn = {
  role: 'model',
  parts: [
    { text: 'Let me look.', thoughtSignature: 'CiQBVKhc7w…text' },
    { functionCall: { name: 'read_file', args: { path: 'a.ts' } }, thoughtSignature: 'EjQKMgG…own' },
    { functionCall: { name: 'read_file', args: { path: 'b.ts' } } },
  ],
};
const unsignedTurn = { role: 'model', parts: [{ functionCall: { name: 'list', args: {} } }, { functionCall: { name: 'list', args: { all: true } } }] };

describe("a Gemini client's body on a gemini tier", () => {
  it("goes to the tier's model, as sent: its signatures, safetySettings and cachedContent untouched", () => {
    const body = {
      contents: [{ role: 'user', parts: [{ text: 'read both' }] }, signedTurn],
      safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
      cachedContent: 'cachedContents/abc',
      generationConfig: { temperature: 0, maxOutputTokens: 800, thinkingConfig: { includeThoughts: true } },
    };
    const upstream = geminiWire.relayRequest(tier.provider, tier, body, true, {});
    expect(upstream.path).toBe('/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse');
    expect(JSON.parse(upstream.body)).toEqual(body);
    expect(upstream.headers['x-goog-api-key']).toBe('AIza-k');
    expect(geminiWire.relayRequest(tuned.provider, tuned, body, false, {}).path).toBe('/v1beta/tunedModels/my-model-7:generateContent');
  });

  it("a call another tier made gets Google's documented signature on its turn's first call; maxOutputTokens within the tier's cap", () => {
    const body = { contents: [{ role: 'user', parts: [{ text: 'list' }] }, unsignedTurn, signedTurn], generationConfig: { maxOutputTokens: 64000 } };
    const sent = JSON.parse(geminiWire.relayRequest(tier.provider, tier, body, false, {}).body);
    expect(sent.contents[1].parts).toEqual([{ functionCall: { name: 'list', args: {} }, thoughtSignature: SKIP_SIGNATURE }, unsignedTurn.parts[1]]);
    expect(sent.contents[2]).toEqual(signedTurn);
    expect(sent.generationConfig).toEqual({ maxOutputTokens: 1000 });
    // The client's own object is not changed.
    expect(unsignedTurn.parts[0]).toEqual({ functionCall: { name: 'list', args: {} } });
  });

  it("countTokens at the tier's model, a generateContentRequest naming it too", () => {
    const upstream = geminiWire.countTokensRequest!(
      tier.provider,
      tier,
      { generateContentRequest: { model: 'models/route', contents: [{ role: 'user', parts: [{ text: 'hi' }] }] } },
      {},
    );
    expect(upstream.path).toBe('/v1beta/models/gemini-2.5-pro:countTokens');
    expect(JSON.parse(upstream.body).generateContentRequest.model).toBe('models/gemini-2.5-pro');
    const plain = geminiWire.countTokensRequest!(tier.provider, tier, { contents: [] }, {});
    expect(JSON.parse(plain.body)).toEqual({ contents: [] });
  });
});
