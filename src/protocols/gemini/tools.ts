import { isRecord } from '../../util/is-record.js';
import { stringField } from '../core/fields.js';
import type { NeutralTool, NeutralToolChoice } from '../core/neutral.js';
import { geminiToJsonSchema } from './json-schema.js';

/**
 * A Gemini body's function tools: each `functionDeclarations` entry, its arguments as JSON
 * Schema (`parametersJsonSchema` as sent, `parameters` in Gemini's `Schema` turned into it).
 * Tools that run at Google (googleSearch, codeExecution, urlContext, …) are not the client's to
 * run: a tier that is not Gemini has none, so they are left out and the model answers without.
 * With `allowedFunctionNames` (toolConfig), only those may be called: only they are offered.
 */
export function geminiTools(body: Record<string, unknown>): NeutralTool[] {
  if (!Array.isArray(body.tools)) return [];
  const allowed = allowedNames(body);
  const out: NeutralTool[] = [];
  for (const tool of body.tools) {
    if (!isRecord(tool) || !Array.isArray(tool.functionDeclarations)) continue;
    for (const declaration of tool.functionDeclarations) {
      const name = isRecord(declaration) ? stringField(declaration.name) : undefined;
      if (!isRecord(declaration) || !name || (allowed && !allowed.has(name))) continue;
      const neutral: NeutralTool = { name, parameters: parametersOf(declaration) };
      const description = stringField(declaration.description);
      if (description) neutral.description = description;
      out.push(neutral);
    }
  }
  return out;
}

function parametersOf(declaration: Record<string, unknown>): Record<string, unknown> {
  if (isRecord(declaration.parametersJsonSchema)) return asJsonSchema(declaration.parametersJsonSchema);
  if (isRecord(declaration.parameters)) return geminiToJsonSchema(declaration.parameters);
  return { type: 'object', properties: {} };
}

/** The function-calling mode toolConfig sets: AUTO (the default), ANY (some call is required), NONE, VALIDATED (as AUTO). */
function callingConfig(body: Record<string, unknown>): Record<string, unknown> | undefined {
  const config = isRecord(body.toolConfig) ? body.toolConfig.functionCallingConfig : undefined;
  return isRecord(config) ? config : undefined;
}

function allowedNames(body: Record<string, unknown>): Set<string> | undefined {
  const names = callingConfig(body)?.allowedFunctionNames;
  if (!Array.isArray(names)) return undefined;
  const set = new Set(names.filter((name): name is string => typeof name === 'string'));
  return set.size > 0 ? set : undefined;
}

/** toolConfig's mode as the neutral choice: ANY is required (one allowed name: that tool), NONE none. */
export function geminiToolChoice(body: Record<string, unknown>): NeutralToolChoice | undefined {
  const config = callingConfig(body);
  const mode = typeof config?.mode === 'string' ? config.mode.toUpperCase() : undefined;
  if (mode === 'NONE') return 'none';
  if (mode !== 'ANY') return mode === 'AUTO' || mode === 'VALIDATED' ? 'auto' : undefined;
  const allowed = allowedNames(body);
  return allowed?.size === 1 ? { name: [...allowed][0] } : 'required';
}

/** The client said no function may be called (`mode: NONE`). */
export function geminiChoosesNoTool(body: Record<string, unknown>): boolean {
  return geminiToolChoice(body) === 'none';
}

/** JSON Schema type names Gemini clients also write in capitals (Gemini CLI's response schemas do). */
const LOWER_TYPES = new Set(['STRING', 'NUMBER', 'INTEGER', 'BOOLEAN', 'ARRAY', 'OBJECT', 'NULL']);

/**
 * A JSON Schema as other servers read it: `type` names in capitals (`"OBJECT"`, which Gemini
 * accepts and Gemini CLI sends) in lower case. The schema itself when nothing needs it (no copy).
 */
export function asJsonSchema(schema: Record<string, unknown>, depth = 0): Record<string, unknown> {
  if (depth > 64) return schema;
  let out: Record<string, unknown> | undefined;
  const set = (key: string, value: unknown): void => {
    out ??= { ...schema };
    out[key] = value;
  };
  const type = schema.type;
  if (typeof type === 'string' && LOWER_TYPES.has(type)) set('type', type.toLowerCase());
  else if (Array.isArray(type) && type.some((t) => typeof t === 'string' && LOWER_TYPES.has(t)))
    set(
      'type',
      type.map((t) => (typeof t === 'string' && LOWER_TYPES.has(t) ? t.toLowerCase() : t)),
    );
  if (isRecord(schema.properties)) {
    const properties = mapValues(schema.properties, depth);
    if (properties !== schema.properties) set('properties', properties);
  }
  for (const key of ['items', 'additionalProperties', 'not']) {
    const value = schema[key];
    if (isRecord(value)) {
      const next = asJsonSchema(value, depth + 1);
      if (next !== value) set(key, next);
    }
  }
  for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems']) {
    const list = schema[key];
    if (!Array.isArray(list)) continue;
    const next = list.map((member) => (isRecord(member) ? asJsonSchema(member, depth + 1) : member));
    if (next.some((member, i) => member !== list[i])) set(key, next);
  }
  for (const key of ['$defs', 'definitions']) {
    const defs = schema[key];
    if (!isRecord(defs)) continue;
    const next = mapValues(defs, depth);
    if (next !== defs) set(key, next);
  }
  return out ?? schema;
}

function mapValues(table: Record<string, unknown>, depth: number): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(table)) {
    if (!isRecord(value)) continue;
    const next = asJsonSchema(value, depth + 1);
    // defineProperty: a body's key may be "__proto__", which an assignment would take as the prototype.
    if (next !== value) Object.defineProperty((out ??= { ...table }), key, { value: next, writable: true, enumerable: true, configurable: true });
  }
  return out ?? table;
}
