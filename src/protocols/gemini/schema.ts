import { z } from '#zod';
import { isRecord } from '../../util/is-record.js';
import { isArrayOfObjects } from '../core/plain-body.js';

const PARTS = z.array(z.looseObject({}, 'each part must be an object'), '"parts" must be an array of parts').nullish();
const CONTENT = z.looseObject({ role: z.string('a content\'s "role" must be "user" or "model"').optional(), parts: PARTS }, 'each content must be an object');

/**
 * What llm-route checks of a Gemini `GenerateContentRequest` (the model is in the path): enough
 * to route, relay and translate it. Everything else (safetySettings, cachedContent, fields of
 * newer API versions) passes through untouched (looseObject): a relay sends it as it came.
 * A countTokens body may instead hold the request it counts as `generateContentRequest`.
 */
export const GeminiBodySchema = z.looseObject({
  contents: z.array(CONTENT, '"contents" is required and must be an array of {role, parts}'),
  systemInstruction: z.union([z.string(), CONTENT], '"systemInstruction" must be a content ({parts: [{text}]})').optional(),
  tools: z.array(z.looseObject({}, 'each tool must be an object'), '"tools" must be an array').optional(),
  toolConfig: z.looseObject({}, '"toolConfig" must be an object').optional(),
  generationConfig: z.looseObject({}, '"generationConfig" must be an object').optional(),
});

export type GeminiBody = z.infer<typeof GeminiBodySchema>;

/** True only for a body GeminiBodySchema accepts (checkedBody's fast path; zod judges the rest). */
export function isPlainGeminiBody(body: unknown): body is GeminiBody {
  if (!isRecord(body) || !Array.isArray(body.contents)) return false;
  for (const content of body.contents) if (!isPlainContent(content)) return false;
  const { systemInstruction, tools, toolConfig, generationConfig } = body;
  return (
    (systemInstruction === undefined || typeof systemInstruction === 'string' || isPlainContent(systemInstruction)) &&
    (tools === undefined || isArrayOfObjects(tools)) &&
    (toolConfig === undefined || isRecord(toolConfig)) &&
    (generationConfig === undefined || isRecord(generationConfig))
  );
}

function isPlainContent(content: unknown): boolean {
  if (!isRecord(content)) return false;
  const { role, parts } = content;
  return (role === undefined || typeof role === 'string') && (parts === undefined || parts === null || isArrayOfObjects(parts));
}

/**
 * The request a body generates from: itself, or the `generateContentRequest` a countTokens body
 * holds instead of `contents` (what it counts, tools and system instruction included).
 */
export function generationOf(body: Record<string, unknown>): Record<string, unknown> {
  return body.contents === undefined && isRecord(body.generateContentRequest) ? body.generateContentRequest : body;
}
