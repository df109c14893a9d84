import { describe, expect, it } from 'vitest';
import { googleError, retryDelayOf } from '../../../../src/protocols/gemini/errors.js';
import { geminiWire } from '../../../../src/protocols/gemini/wire.js';

// Whose fault each of Google's errors is: the bodies as generativelanguage.googleapis.com
// answers them (their words collected from the errors users reported).

const googleBody = (code: number, status: string, message: string, details?: unknown[]): string =>
  JSON.stringify({ error: { code, message, status, ...(details ? { details } : {}) } }, null, 2);

const BAD_KEY = googleBody(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [
  {
    '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
    reason: 'API_KEY_INVALID',
    domain: 'googleapis.com',
    metadata: { service: 'generativelanguage.googleapis.com' },
  },
  { '@type': 'type.googleapis.com/google.rpc.LocalizedMessage', locale: 'en-US', message: 'API key not valid. Please pass a valid API key.' },
]);
const QUOTA = googleBody(
  429,
  'RESOURCE_EXHAUSTED',
  'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.',
  [
    {
      '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
      violations: [
        {
          quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_input_token_count',
          quotaId: 'GenerateContentInputTokensPerModelPerMinute-FreeTier',
        },
      ],
    },
    {
      '@type': 'type.googleapis.com/google.rpc.Help',
      links: [{ description: 'Learn more about Gemini API quotas', url: 'https://ai.google.dev/gemini-api/docs/rate-limits' }],
    },
    { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '26s' },
  ],
);

const TABLE: Array<[string, number, string, Record<string, unknown>]> = [
  ['an invalid key (400)', 400, BAD_KEY, { reason: 'auth', failover: true, retryable: false }],
  [
    'a key not found (400, no details)',
    400,
    googleBody(400, 'INVALID_ARGUMENT', 'API Key not found. Please pass a valid API key.'),
    { reason: 'auth', failover: true },
  ],
  [
    'a prompt over the limit (400)',
    400,
    googleBody(400, 'INVALID_ARGUMENT', 'The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).'),
    { reason: 'context_length', failover: true, retryable: false, healthNeutral: true },
  ],
  [
    'a bad payload (400)',
    400,
    googleBody(400, 'INVALID_ARGUMENT', '* GenerateContentRequest.contents: contents is not specified\n'),
    { reason: 'bad_request', failover: false, retryable: false },
  ],
  [
    'a feature the model lacks (400)',
    400,
    googleBody(400, 'INVALID_ARGUMENT', 'Function calling is not enabled for models/gemma-3-27b-it'),
    { reason: 'unsupported', failover: true, healthNeutral: true },
  ],
  [
    'a region Google does not serve (400 FAILED_PRECONDITION)',
    400,
    googleBody(400, 'FAILED_PRECONDITION', 'User location is not supported for the API use.'),
    { reason: 'client_error', failover: true, retryable: false },
  ],
  [
    'no key (403)',
    403,
    googleBody(403, 'PERMISSION_DENIED', "Method doesn't allow unregistered callers (callers without established identity)."),
    { reason: 'auth' },
  ],
  ['unauthenticated (401)', 401, googleBody(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.'), { reason: 'auth' }],
  [
    'an unknown model (404)',
    404,
    googleBody(
      404,
      'NOT_FOUND',
      'models/gemini-9 is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.',
    ),
    { reason: 'model_not_found', failover: true, retryable: false },
  ],
  ['a quota with RetryInfo (429)', 429, QUOTA, { reason: 'rate_limited', failover: true, retryable: true, retryAfterMs: 26_000 }],
  ['a bare 429', 429, googleBody(429, 'RESOURCE_EXHAUSTED', 'Resource has been exhausted (e.g. check quota).'), { reason: 'rate_limited', retryable: true }],
  [
    'an internal error (500)',
    500,
    googleBody(500, 'INTERNAL', 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting'),
    { reason: 'server_error', failover: true, retryable: true },
  ],
  ['an overload (503)', 503, googleBody(503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.'), { reason: 'server_error', retryable: true }],
  [
    'a deadline (504)',
    504,
    googleBody(504, 'DEADLINE_EXCEEDED', 'Deadline expired before operation could complete.'),
    { reason: 'server_error', failover: true, retryable: false },
  ],
  ['an HTML page from a proxy (502)', 502, '<html><body>Bad Gateway</body></html>', { reason: 'server_error', failover: true, retryable: true }],
];

describe("Google's errors, classified", () => {
  it.each(TABLE)('%s', (_what, status, body, verdict) => {
    expect(geminiWire.classifyStatus(status, body, {})).toMatchObject(verdict);
  });

  it("the message is the error's own words, never the body", () => {
    const verdict = geminiWire.classifyStatus(400, BAD_KEY, {});
    expect(verdict.message).toBe('API key not valid. Please pass a valid API key.');
    expect(geminiWire.classifyStatus(503, googleBody(503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.'), {}).message).toBe(
      'The model is overloaded. Please try again later.',
    );
  });

  it('reads the error in an array (the JSON-array answer) and RetryInfo delays in fractions of a second', () => {
    const error = googleError(
      `[${googleBody(429, 'RESOURCE_EXHAUSTED', 'slow down', [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '0.25s' }])}]`,
    );
    expect(error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED', message: 'slow down' });
    expect(retryDelayOf(error!)).toBe(250);
    expect(googleError('{"error":"flat"}')).toBeUndefined();
    expect(googleError('<html>')).toBeUndefined();
  });
});
