import type { AttemptRecord } from '../telemetry/events.js';
import { DEFAULT_ENCODING } from '../tokens/count.js';
import { isRecord } from '../util/is-record.js';
import type { PromptCount } from '../protocols/core/prompt-tokens.js';

/** Why no tier answered, when it was the payload's size (docs/fit.md): the numbers for the client's 400. */
export interface PayloadFailure {
  /** The prompt's tokens: a server's own count when one said it, else llm-route's. */
  promptTokens: number;
  /** The biggest window among the tiers, when any was known. */
  maxTokens: number | undefined;
  /** Anthropic's words, which Claude Code compacts on: "prompt is too long: N tokens > M maximum". */
  message: string;
}

/** What the numbers are read from: a failed attempt's upstream answer (proxy/attempt-error.ts's AttemptError has it). */
export interface FailedAnswer {
  readonly upstream: { readonly body: Buffer } | undefined;
}

export interface TooLongNumbers {
  prompt?: number;
  limit?: number;
}

/** Outcomes that are the payload's sake: skipped by the fit check, rejected as too long, an input the tier cannot take. */
const PAYLOAD_OUTCOMES = new Set(['too_long', 'context_length', 'unsupported']);

export const payloadFailure = {
  /**
   * The numbers a context-length rejection gives: llama.cpp's `n_prompt_tokens` and `n_ctx`,
   * else OpenAI's words ("maximum context length is 8192 tokens … resulted in 9000 tokens").
   */
  numbersOf(error: FailedAnswer, knownWindow?: number): TooLongNumbers {
    const said = this.saidBy(error);
    // A server that gave no window (Ollama's words carry none): the one llm-route knows for the tier.
    return said.limit === undefined && knownWindow !== undefined ? { ...said, limit: knownWindow } : said;
  },

  saidBy(error: FailedAnswer): TooLongNumbers {
    const body = error.upstream?.body;
    if (!body || body.length > 65_536) return {};
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      return {};
    }
    const inner = isRecord(json) && isRecord(json.error) ? json.error : null;
    if (!inner) return {};
    if (typeof inner.n_prompt_tokens === 'number' && typeof inner.n_ctx === 'number') return { prompt: inner.n_prompt_tokens, limit: inner.n_ctx };
    const message = typeof inner.message === 'string' ? inner.message : '';
    const limit = /maximum context length is (\d+)/i.exec(message)?.[1];
    const prompt = /resulted in (\d+) tokens|requested (\d+) tokens/i.exec(message);
    return { ...(limit ? { limit: Number(limit) } : {}), ...(prompt ? { prompt: Number(prompt[1] ?? prompt[2]) } : {}) };
  },

  /** The failure when every attempt failed for the payload's sake and at least one as too long; else null (a 502/504 as before). */
  async of(attempts: AttemptRecord[], tooLong: TooLongNumbers[], prompt: PromptCount): Promise<PayloadFailure | null> {
    if (tooLong.length === 0 || !attempts.every((a) => PAYLOAD_OUTCOMES.has(a.outcome))) return null;
    const prompts = tooLong.flatMap((n) => (n.prompt === undefined ? [] : [n.prompt]));
    const limits = tooLong.flatMap((n) => (n.limit === undefined ? [] : [n.limit]));
    const promptTokens = prompts.length > 0 ? Math.max(...prompts) : (prompt.made ?? (await prompt.tokens(DEFAULT_ENCODING)));
    const maxTokens = limits.length > 0 ? Math.max(...limits) : undefined;
    const message =
      maxTokens !== undefined
        ? `prompt is too long: ${promptTokens} tokens > ${maxTokens} maximum`
        : `prompt is too long: ${promptTokens} tokens, more than any tier of the route takes`;
    return { promptTokens, maxTokens, message };
  },
};
