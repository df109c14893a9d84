import { isRecord } from '../../util/is-record.js';
import { assignNumbers, entryNamed, numberField, stringList } from '../core/fields.js';
import type { NeutralRequest, ResponseFormat } from '../core/neutral.js';
import { effortOfBudget } from '../translate/reasoning.js';
import { geminiToJsonSchema } from './json-schema.js';
import { asJsonSchema } from './tools.js';

/** A body's generationConfig, or an empty one. */
export function generationConfig(body: Record<string, unknown>): Record<string, unknown> {
  return isRecord(body.generationConfig) ? body.generationConfig : {};
}

/**
 * generationConfig in the neutral request's terms: sampling, the answer's cap, stop sequences,
 * candidates, structured output (`responseMimeType: application/json` with `responseSchema` in
 * Gemini's Schema or `responseJsonSchema`), and thinking as a reasoning effort. What only
 * Gemini has (responseModalities, speechConfig, mediaResolution, logprobs) has nowhere to go.
 */
export function applyGeneration(body: Record<string, unknown>, request: NeutralRequest): void {
  const config = generationConfig(body);
  const { temperature, topP, topK, seed, frequencyPenalty, presencePenalty } = config;
  assignNumbers(request, { temperature, topP, topK, seed, frequencyPenalty, presencePenalty });
  const maxTokens = geminiMaxTokens(body);
  if (maxTokens !== undefined) request.maxTokens = maxTokens;
  const stop = stringList(config.stopSequences);
  if (stop) request.stop = stop;
  const candidates = numberField(config.candidateCount);
  if (candidates !== undefined && candidates > 1) request.choices = candidates;
  const format = responseFormat(config);
  if (format) request.responseFormat = format;
  const effort = thinkingEffort(config);
  if (effort) request.reasoningEffort = effort;
}

/** The answer's cap: `maxOutputTokens`. */
export function geminiMaxTokens(body: Record<string, unknown>): number | undefined {
  const max = numberField(generationConfig(body).maxOutputTokens);
  return max !== undefined && max > 0 ? Math.floor(max) : undefined;
}

/** JSON asked for: with a schema (responseJsonSchema as JSON Schema, responseSchema in Gemini's), else any JSON object. */
function responseFormat(config: Record<string, unknown>): ResponseFormat | undefined {
  if (typeof config.responseMimeType !== 'string' || config.responseMimeType.toLowerCase() !== 'application/json') return undefined;
  if (isRecord(config.responseJsonSchema)) return { type: 'json_schema', name: 'response', schema: asJsonSchema(config.responseJsonSchema) };
  if (isRecord(config.responseSchema)) return { type: 'json_schema', name: 'response', schema: geminiToJsonSchema(config.responseSchema) };
  return { type: 'json_object' };
}

/** Gemini 3's thinking levels as efforts. */
const LEVELS: Readonly<Record<string, string>> = { MINIMAL: 'minimal', LOW: 'low', MEDIUM: 'medium', HIGH: 'high' };

/**
 * thinkingConfig as a reasoning effort: `thinkingLevel` by name, `thinkingBudget` 0 none and a
 * budget by its size (-1, dynamic, asks for nothing in particular: no effort); `includeThoughts`
 * alone only asks to see them.
 */
function thinkingEffort(config: Record<string, unknown>): string | undefined {
  const thinking = isRecord(config.thinkingConfig) ? config.thinkingConfig : undefined;
  if (!thinking) return undefined;
  const level = typeof thinking.thinkingLevel === 'string' ? entryNamed(LEVELS, thinking.thinkingLevel.toUpperCase()) : undefined;
  if (level) return level;
  const budget = numberField(thinking.thinkingBudget);
  if (budget === 0) return 'none';
  return budget !== undefined && budget > 0 ? effortOfBudget(budget) : undefined;
}

/** The body asks the model to reason: a thinking level above minimal, a budget other than 0, or thoughts shown. */
export function geminiAsksThinking(body: Record<string, unknown>): boolean {
  const effort = thinkingEffort(generationConfig(body));
  if (effort !== undefined) return effort !== 'none' && effort !== 'minimal';
  const thinking = generationConfig(body).thinkingConfig;
  return isRecord(thinking) && (thinking.includeThoughts === true || thinking.thinkingBudget === -1);
}

/** The client asked to see the model's thoughts (`includeThoughts`): only then does an answer carry thought parts, as Gemini's do. */
export function showsThoughts(body: Record<string, unknown>): boolean {
  const thinking = generationConfig(body).thinkingConfig;
  return isRecord(thinking) && thinking.includeThoughts === true;
}
