import type { Tier } from '../../config/schema.js';
import { isRecord } from '../../util/is-record.js';
import { deepToolArguments, hostedToolsUnsupported, type NeutralRequest, type NeutralTool, type NeutralToolChoice } from '../core/neutral.js';
import { isUnsupported, type Unsupported } from '../core/types.js';
import { capTokens } from '../translate/max-tokens.js';
import { budgetOfEffort } from '../translate/reasoning.js';
import { geminiContents } from './contents.js';
import { withoutSchemaDialect } from './schema-dialect.js';

/**
 * A neutral request as a Gemini `generateContent` body for `tier`: `contents`, the system prompt
 * as `systemInstruction`, tools as `functionDeclarations`, the tool choice as `toolConfig`, and
 * the sampling, stop, structured output and thinking controls in `generationConfig`.
 * `safetySettings` and `cachedContent` are a Gemini client's own (relayed); a translation sets none.
 */
export function geminiFromNeutral(request: NeutralRequest, tier: Tier): Record<string, unknown> | Unsupported {
  if (request.choices !== undefined && request.choices > 1) return { unsupported: 'n > 1 (several choices) is not something a Gemini tier streams' };
  if (request.previousResponseId) return { unsupported: 'previous_response_id needs a tier that serves the Responses API itself' };
  if (request.hostedTools?.length) return hostedToolsUnsupported(request.hostedTools);
  const deep = deepToolArguments(request);
  if (deep) return deep;
  const contents = geminiContents(request.messages);
  if (isUnsupported(contents)) return contents;
  const body: Record<string, unknown> = { contents };
  if (request.system.length > 0) body.systemInstruction = { parts: request.system.map((text) => ({ text })) };
  if (request.tools.length > 0) {
    body.tools = [{ functionDeclarations: request.tools.map(functionDeclaration) }];
    if (request.toolChoice !== undefined) body.toolConfig = { functionCallingConfig: callingConfig(request.toolChoice) };
  }
  const config = generationConfig(request, tier);
  if (Object.keys(config).length > 0) body.generationConfig = config;
  return body;
}

/**
 * A tool as a function declaration, its JSON Schema as `parametersJsonSchema`. Gemini's other
 * field, `parameters`, is its own `Schema` message, which refuses every JSON Schema word it has no
 * field for (`additionalProperties`, `const`, `$ref`, a list of types: "Invalid JSON payload
 * received. Unknown name …", 400); `parametersJsonSchema` takes JSON Schema itself, so a client's
 * arbitrary schema (an MCP server's) goes as it is, nothing lost in a conversion, but for
 * `$schema`, the one keyword it refuses (withoutSchemaDialect). A function that takes nothing
 * declares nothing.
 */
function functionDeclaration(tool: NeutralTool): Record<string, unknown> {
  const declaration: Record<string, unknown> = { name: tool.name };
  if (tool.description) declaration.description = tool.description;
  if (takesArguments(tool.parameters)) declaration.parametersJsonSchema = withoutSchemaDialect(tool.parameters);
  return declaration;
}

function takesArguments(schema: Record<string, unknown>): boolean {
  if (Object.keys(schema).length === 0) return false;
  if (schema.type !== 'object') return true;
  return !(isRecord(schema.properties) && Object.keys(schema.properties).length === 0) || schema.additionalProperties !== undefined;
}

/** `auto` → AUTO, `required` → ANY, `none` → NONE, one named tool → ANY with it alone allowed. */
function callingConfig(choice: NeutralToolChoice): Record<string, unknown> {
  if (typeof choice === 'object') return { mode: 'ANY', allowedFunctionNames: [choice.name] };
  return { mode: choice === 'required' ? 'ANY' : choice === 'none' ? 'NONE' : 'AUTO' };
}

/** Gemini's largest thinking budget on its Flash models (its Pro models take 32768). */
const MAX_THINKING_BUDGET = 24_576;

function generationConfig(request: NeutralRequest, tier: Tier): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  if (request.temperature !== undefined) config.temperature = request.temperature;
  if (request.topP !== undefined) config.topP = request.topP;
  if (request.topK !== undefined) config.topK = request.topK;
  const maxTokens = capTokens(request.maxTokens, tier);
  if (maxTokens !== undefined) config.maxOutputTokens = maxTokens;
  if (request.stop) config.stopSequences = request.stop;
  if (request.seed !== undefined) config.seed = request.seed;
  const format = request.responseFormat;
  if (format?.type === 'json_object') config.responseMimeType = 'application/json';
  else if (format?.type === 'json_schema') {
    // As JSON Schema, for the reason tools go as parametersJsonSchema.
    config.responseMimeType = 'application/json';
    config.responseJsonSchema = withoutSchemaDialect(format.schema);
  }
  if (request.reasoningEffort) {
    const thinking = thinkingConfig(request.reasoningEffort, maxTokens);
    if (thinking) config.thinkingConfig = thinking;
  }
  return config;
}

/**
 * An effort as a thinking budget (the one scale every Gemini model with thinking takes; the
 * thoughts shown, as a client that asks for reasoning wants them): `none` turns thinking off,
 * the others take Anthropic's budgets, below `maxOutputTokens` (which Gemini's thoughts count
 * against). A model that cannot think, or cannot stop thinking, refuses it, and the call is
 * made again without it (translate/reasoning.ts).
 */
function thinkingConfig(effort: string, maxTokens: number | undefined): Record<string, unknown> | undefined {
  if (effort === 'none') return { thinkingBudget: 0 };
  const budget = budgetOfEffort(effort, maxTokens ?? Number.POSITIVE_INFINITY);
  return budget === undefined ? undefined : { thinkingBudget: Math.min(budget, MAX_THINKING_BUDGET), includeThoughts: true };
}
