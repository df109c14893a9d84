import { describe, expect, it } from 'vitest';
import { classifyStatus } from '../../../../src/protocols/errors/classify-status.js';
import { classifyRejection } from '../../../../src/protocols/errors/rejections.js';

// Each body exactly as the server sends it (llama.cpp de3ff81 tools/server, vLLM
// entrypoints/openai serving, Ollama's /v1 and native API, OpenAI, Anthropic).
const BODIES = {
  llamacppOverflow:
    '{"error":{"code":400,"message":"request (870 tokens) exceeds the available context size (256 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":870,"n_ctx":256}}',
  llamacppLarger:
    '{"error":{"code":400,"message":"input (1200 tokens) is larger than the max context size (1024 tokens). skipping","type":"exceed_context_size_error"}}',
  llamacppDecode: '{"error":{"code":500,"message":"Context size has been exceeded.","type":"server_error"}}',
  vllmInput: `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, your request has 5000 input tokens. Please reduce the length of the input messages.","type":"BadRequestError","param":null,"code":400}`,
  vllmInputNested: `{"error":{"message":"This model's maximum context length is 32768 tokens. However, your request has 40000 input tokens. Please reduce the length of the input messages.","type":"BadRequestError","param":null,"code":400}}`,
  vllmMaxTokens: `{"error":{"message":"'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum context length is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - 2778). None","type":"BadRequestError","param":null,"code":400}}`,
  ollamaV1:
    '{"error":{"message":"the prompt is longer than the context length currently available to the model; shorten the prompt, adjust the context length in settings, or use a model with a longer context length","type":"invalid_request_error","param":null,"code":null}}',
  ollamaNative:
    '{"error":"the prompt is longer than the context length currently available to the model; shorten the prompt, adjust the context length in settings, or use a model with a longer context length"}',
  openai: `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
  openaiCodeOnly:
    '{"error":{"message":"Your input exceeds the limits of this model.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}',
  anthropic: '{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}',
  llamacppImage:
    '{"error":{"code":500,"message":"image input is not supported - hint: if this is unexpected, you may need to provide the mmproj","type":"server_error"}}',
  llamacppAudio:
    '{"error":{"code":500,"message":"audio input is not supported - hint: if this is unexpected, you may need to provide the mmproj","type":"server_error"}}',
  llamacppInputFile: `{"error":{"code":400,"message":"'input_file' is not supported by llamacpp at this moment","type":"invalid_request_error"}}`,
  llamacppNotSupported: '{"error":{"code":501,"message":"Infill is not supported by this model: prompt tokens missing","type":"not_supported_error"}}',
  vllmNotMultimodal: '{"error":{"message":"Qwen2.5-7B-Instruct is not a multimodal model","type":"BadRequestError","param":null,"code":400}}',
  ollamaNoVision: '{"error":"this model is missing data required for image input"}',
  ollamaNoTools: '{"error":{"message":"registry.ollama.ai/library/gemma:2b does not support tools","type":"api_error","param":null,"code":null}}',
  openaiUnsupportedParameter: `{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}`,
  openaiPolicy:
    '{"error":{"message":"Your request was rejected as a result of our safety system.","type":"invalid_request_error","param":null,"code":"content_policy_violation"}}',
  azureFilter: `{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy.","type":null,"param":"prompt","code":"content_filter","status":400}}`,
  llamacppLoading: '{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}',
  llamacppEmbeddingTooLarge:
    '{"error":{"code":500,"message":"input (700 tokens) is too large to process. increase the physical batch size (current batch size: 512)","type":"server_error"}}',
  llamacppEmbeddingsOff:
    '{"error":{"code":501,"message":"This server does not support embeddings. Start it with `--embeddings`","type":"not_supported_error"}}',
  llamacppPoolingNone: `{"error":{"code":400,"message":"Pooling type 'none' is not OAI compatible. Please use a different pooling type","type":"invalid_request_error"}}`,
} as const;

const classify = (status: number, body: string) => classifyStatus(status, body);

describe('context-length rejections fail over, never retried', () => {
  it.each([
    ['llama.cpp 400 exceed_context_size_error', 400, BODIES.llamacppOverflow],
    ['llama.cpp 400 input larger than the max context size', 400, BODIES.llamacppLarger],
    ['llama.cpp 500 Context size has been exceeded.', 500, BODIES.llamacppDecode],
    ['vLLM 400 maximum context length (top-level error object)', 400, BODIES.vllmInput],
    ['vLLM 400 maximum context length', 400, BODIES.vllmInputNested],
    ['vLLM 400 max_tokens too large', 400, BODIES.vllmMaxTokens],
    ['Ollama /v1 400', 400, BODIES.ollamaV1],
    ['Ollama native 400', 400, BODIES.ollamaNative],
    ['OpenAI context_length_exceeded', 400, BODIES.openai],
    ['OpenAI, by its code alone', 400, BODIES.openaiCodeOnly],
    ['Anthropic 400 prompt is too long', 400, BODIES.anthropic],
    ['llama.cpp 500 an embedding input longer than its physical batch', 500, BODIES.llamacppEmbeddingTooLarge],
  ])('%s', (_name, status, body) => {
    expect(classify(status, body)).toMatchObject({ reason: 'context_length', failover: true, retryable: false });
  });

  it("keeps the server's own message", () => {
    expect(classify(400, BODIES.llamacppOverflow).message).toBe('request (870 tokens) exceeds the available context size (256 tokens), try increasing it');
    expect(classify(400, BODIES.anthropic).message).toBe('prompt is too long: 210000 tokens > 200000 maximum');
  });
});

describe('unsupported input fails over as `unsupported`, never retried, whatever the status', () => {
  it.each([
    ['llama.cpp 500 image input', 500, BODIES.llamacppImage],
    ['llama.cpp 500 audio input', 500, BODIES.llamacppAudio],
    ['llama.cpp 400 input_file', 400, BODIES.llamacppInputFile],
    ['llama.cpp 501 not_supported_error', 501, BODIES.llamacppNotSupported],
    ['vLLM 400 not a multimodal model', 400, BODIES.vllmNotMultimodal],
    ['Ollama 500 no vision', 500, BODIES.ollamaNoVision],
    ['Ollama 400 no tools', 400, BODIES.ollamaNoTools],
    ['OpenAI 400 unsupported_parameter', 400, BODIES.openaiUnsupportedParameter],
    ['llama.cpp 501 started without --embeddings', 501, BODIES.llamacppEmbeddingsOff],
    ['llama.cpp 400 embeddings of a model run without pooling', 400, BODIES.llamacppPoolingNone],
  ])('%s', (_name, status, body) => {
    expect(classify(status, body)).toMatchObject({ reason: 'unsupported', failover: true, retryable: false });
  });

  it('a plain 500 is still a retryable server error', () => {
    expect(classify(500, '{"error":{"code":500,"message":"Compute error.","type":"server_error"}}')).toMatchObject({ reason: 'server_error', retryable: true });
  });
});

describe("content-policy rejections stay the payload's fault", () => {
  it.each([
    ['OpenAI content_policy_violation', BODIES.openaiPolicy],
    ['Azure content_filter', BODIES.azureFilter],
  ])('%s', (_name, body) => {
    expect(classify(400, body)).toMatchObject({ reason: 'content_policy', failover: false });
  });
});

describe('classifyRejection', () => {
  it('trusts the type/code before the words', () => {
    expect(classifyRejection({ status: 400, message: 'something odd', type: 'exceed_context_size_error' })).toBe('context_length');
    expect(classifyRejection({ status: 501, message: 'no', type: 'not_supported_error' })).toBe('unsupported_input');
    expect(classifyRejection({ status: 400, message: 'is not supported', code: 'content_policy_violation' })).toBe('content_policy');
  });

  it('ignores numeric codes and statuses that mean something else', () => {
    expect(classifyRejection({ status: 400, message: 'bad temperature', code: 400 })).toBeNull();
    // A 429 about tokens is a rate limit; a 503 while loading is not a rejection.
    expect(classifyRejection({ status: 429, message: 'too many tokens per minute' })).toBeNull();
    expect(classifyRejection({ status: 503, message: 'Loading model', type: 'unavailable_error' })).toBeNull();
    expect(classifyRejection({ status: 404, message: 'model is not supported' })).toBeNull();
    expect(classify(503, BODIES.llamacppLoading)).toMatchObject({ reason: 'server_error', retryable: true });
  });

  it('reads only the message it is given, so a prompt echoed in the body cannot decide', () => {
    expect(classifyRejection({ status: 400, message: "Invalid value for 'temperature'" })).toBeNull();
    expect(classifyRejection({ status: 400, message: undefined })).toBeNull();
  });
});
