import { z } from '#zod';
import { isRecord } from '../../util/is-record.js';
import { isArrayOfTagged, isFilledString, isOptionalBoolean } from '../core/plain-body.js';

const MODEL = z.string('"model" is required: the name of a route').min(1, '"model" is required: the name of a route');
const IMAGES = z.array(z.string('each image must be a base64 string'), '"images" must be an array of base64 strings');
const STREAM = z.boolean('"stream" must be a boolean').optional();
const FORMAT = z.union([z.string(), z.looseObject({})], '"format" must be "json" or a JSON schema').optional();
const THINK = z.union([z.boolean(), z.string()], '"think" must be true, false or a level ("low", "medium", "high")').optional();
const OPTIONS = z.looseObject({}, '"options" must be an object').optional();

/**
 * What llm-route checks of an Ollama /api/chat body: enough to route, relay and translate it.
 * Every other field passes through untouched (looseObject): a relay sends it as it came.
 */
export const OllamaChatSchema = z.looseObject({
  model: MODEL,
  // An empty list, or none at all, asks Ollama to load the model (see load.ts).
  messages: z
    .array(
      z.looseObject({ role: z.string('each message needs a "role"'), images: IMAGES.nullish() }, 'each message must be an object'),
      '"messages" must be an array',
    )
    .nullish(),
  stream: STREAM,
  format: FORMAT,
  think: THINK,
  options: OPTIONS,
});

/** An Ollama /api/generate body: a prompt (and system, images) instead of messages. */
export const OllamaGenerateSchema = z.looseObject({
  model: MODEL,
  prompt: z.string('"prompt" must be a string').optional(),
  system: z.string('"system" must be a string').optional(),
  suffix: z.string('"suffix" must be a string').optional(),
  images: IMAGES.nullish(),
  stream: STREAM,
  format: FORMAT,
  think: THINK,
  options: OPTIONS,
});

/** True only for a body OllamaChatSchema accepts (checkedBody's fast path; zod judges the rest). */
export function isPlainOllamaChat(body: unknown): body is z.infer<typeof OllamaChatSchema> {
  if (!isRecord(body) || !isFilledString(body.model) || !plainControls(body)) return false;
  if (body.messages === undefined || body.messages === null) return true;
  if (!isArrayOfTagged(body.messages, 'role')) return false;
  for (const message of body.messages) if (!isNullishStrings(message.images)) return false;
  return true;
}

/** True only for a body OllamaGenerateSchema accepts. */
export function isPlainOllamaGenerate(body: unknown): body is z.infer<typeof OllamaGenerateSchema> {
  return (
    isRecord(body) &&
    isFilledString(body.model) &&
    isOptionalString(body.prompt) &&
    isOptionalString(body.system) &&
    isOptionalString(body.suffix) &&
    isNullishStrings(body.images) &&
    plainControls(body)
  );
}

function plainControls(body: Record<string, unknown>): boolean {
  const { format, think, options } = body;
  return (
    isOptionalBoolean(body.stream) &&
    (format === undefined || typeof format === 'string' || isRecord(format)) &&
    (think === undefined || typeof think === 'boolean' || typeof think === 'string') &&
    (options === undefined || isRecord(options))
  );
}

function isOptionalString(value: unknown): boolean {
  return value === undefined || typeof value === 'string';
}

function isNullishStrings(value: unknown): boolean {
  return value === undefined || value === null || (Array.isArray(value) && value.every((item) => typeof item === 'string'));
}
