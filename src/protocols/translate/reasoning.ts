import { entryNamed } from '../core/fields.js';

/**
 * Reasoning controls across vendors: OpenAI's effort (`reasoning_effort`, Responses'
 * `reasoning.effort`), Anthropic's `thinking.budget_tokens` and Ollama's `think` say the same
 * thing in three ways. A tier gets the control in its own terms where it has one; a model that
 * does not reason refuses it with a 400, and the call is then made again without it (call.ts),
 * since the client did not aim the control at that tier.
 */

/** Anthropic's thinking budget for an effort; Anthropic's minimum is 1024. */
const BUDGET: Record<string, number> = { minimal: 1024, low: 2048, medium: 8192, high: 24576, xhigh: 32768 };

/** The effort an Anthropic thinking budget amounts to. */
export function effortOfBudget(budget: number): string {
  if (budget <= BUDGET.low) return 'low';
  if (budget <= BUDGET.medium) return 'medium';
  return 'high';
}

/**
 * The thinking budget for an effort within `maxTokens` (Anthropic wants it below max_tokens
 * and at least 1024); undefined when the effort asks for none or there is no room for it.
 */
export function budgetOfEffort(effort: string, maxTokens: number): number | undefined {
  const wanted = entryNamed(BUDGET, effort);
  if (wanted === undefined || maxTokens <= BUDGET.minimal + 1) return undefined;
  return Math.min(wanted, maxTokens - 1);
}

/** Ollama's `think` for an effort: its levels, or false for none. */
export function ollamaThink(effort: string): boolean | string {
  if (effort === 'none') return false;
  if (effort === 'minimal') return 'low';
  return effort === 'xhigh' ? 'high' : effort;
}

/** A 400 that refuses a reasoning control ("reasoning_effort is not supported", "does not support thinking"). */
export function isReasoningRefusal(status: number | undefined, message: string): boolean {
  return status === 400 && /reasoning|thinking|\bthink\b/i.test(message);
}
