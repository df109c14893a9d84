/**
 * What an upstream's error answer says about the request, whatever server sent it: the
 * prompt does not fit this tier's context (`context_length`: another tier may have a bigger
 * one), the tier cannot take this kind of input (`unsupported_input`: an image for a model
 * without vision, a parameter this server lacks), or a content filter refused it
 * (`content_policy`: every tier would). null: none of these; the status decides.
 *
 * Pure, and protocol-neutral: each codec reads its own error shape into an UpstreamError.
 * The type/code is trusted first, the message's words second.
 */
export type RejectionKind = 'context_length' | 'unsupported_input' | 'content_policy';

export interface UpstreamError {
  status: number;
  /** The error's own message (never the whole body: a body may echo the user's prompt). */
  message: string | undefined;
  /** `error.code` (OpenAI, llama.cpp, vLLM send a number there). */
  code?: string | number | null;
  /** `error.type` (Anthropic, llama.cpp, vLLM). */
  type?: string | null;
}

/**
 * The statuses such a rejection comes with. 500: llama.cpp answers its unsupported-input and
 * overflow-at-decode errors with it. Others (401, 404, 429, 503, …) mean what they say.
 */
const REJECTION_STATUSES = new Set([400, 413, 422, 500, 501]);

const BY_CODE: ReadonlyMap<string, RejectionKind> = new Map([
  ['context_length_exceeded', 'context_length'], // OpenAI
  ['exceed_context_size_error', 'context_length'], // llama.cpp
  ['context_window_exceeded', 'context_length'],
  ['not_supported_error', 'unsupported_input'], // llama.cpp 501
  ['unsupported_parameter', 'unsupported_input'], // OpenAI: "'max_tokens' is not supported with this model"
  ['unsupported_value', 'unsupported_input'],
  ['content_policy_violation', 'content_policy'], // OpenAI
  ['content_filter', 'content_policy'], // Azure OpenAI
]);

const CONTEXT_LENGTH = new RegExp(
  [
    'exceeds? the available context size', // llama.cpp: request (870 tokens) exceeds the available context size (256 tokens)
    'too large to process', // llama.cpp, 500: an embedding input (N tokens) is too large to process. increase the physical batch size
    'larger than the max context size', // llama.cpp: input (N tokens) is larger than the max context size (M tokens)
    'context size has been exceeded', // llama.cpp, 500 at decode
    'maximum context length', // OpenAI, vLLM, DeepSeek, OpenRouter
    "'max_tokens' or 'max_completion_tokens' is too large", // vLLM
    'longer than the context length', // Ollama
    'prompt is too long', // Anthropic: prompt is too long: N tokens > M maximum
    'context[_ ]length', // LM Studio, generic
    'context window', // OpenAI Responses: Your input exceeds the context window of this model
    'input is too long',
    'too many (input )?tokens',
    'reduce the length',
    "exceeds the (model'?s? )?(max|maximum|limit)",
  ].join('|'),
  'i',
);

const UNSUPPORTED_INPUT = new RegExp(
  [
    '\\b(is|are) not supported\\b', // llama.cpp: image input is not supported - hint: …; 'input_file' is not supported by llamacpp
    'not a multimodal model', // vLLM
    'missing data required for image input', // Ollama, a model without vision
    'does not support (images?|image input|vision|audio|video|multimodal|tools|embeddings?)', // Ollama: … does not support tools
    'not OAI compatible', // llama.cpp: Pooling type 'none' is not OAI compatible (a model run with --embeddings but no pooling)
  ].join('|'),
  'i',
);

const CONTENT_POLICY = /content[_ ]policy|content[_ ]filter|safety system|flagged/i;

export function classifyRejection(error: UpstreamError): RejectionKind | null {
  if (!REJECTION_STATUSES.has(error.status)) return null;
  for (const label of [error.code, error.type]) {
    const kind = typeof label === 'string' ? BY_CODE.get(label.toLowerCase()) : undefined;
    if (kind) return kind;
  }
  const text = error.message ?? '';
  if (CONTEXT_LENGTH.test(text)) return 'context_length';
  if (CONTENT_POLICY.test(text)) return 'content_policy';
  if (UNSUPPORTED_INPUT.test(text)) return 'unsupported_input';
  return null;
}
