import { isRecord } from '../../util/is-record.js';

/**
 * Gemini's `Schema` (OpenAPI 3.0's subset: types in capitals, `nullable`, counts as int64
 * strings, `propertyOrdering`) and JSON Schema, each into the other: a Gemini client's tools
 * and response schema go to every other wire as JSON Schema, and a JSON Schema goes to a
 * `gemini` tier as Gemini's. What one side has no word for is left out, never guessed.
 */

const TO_JSON_TYPE: Readonly<Record<string, string>> = {
  STRING: 'string',
  NUMBER: 'number',
  INTEGER: 'integer',
  BOOLEAN: 'boolean',
  ARRAY: 'array',
  OBJECT: 'object',
  NULL: 'null',
};

const TO_GEMINI_TYPE: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(TO_JSON_TYPE).map(([gemini, json]) => [json, gemini]));

/** Fields both sides spell alike and carry as they are. */
const SAME_FIELDS = ['description', 'title', 'format', 'pattern', 'default', 'minimum', 'maximum'] as const;
/** Counts Gemini writes as int64 strings (`"3"`), JSON Schema as numbers. */
const COUNT_FIELDS = ['minItems', 'maxItems', 'minLength', 'maxLength', 'minProperties', 'maxProperties'] as const;

/** A Gemini `Schema` as JSON Schema (a nested depth past `depth` is cut: bodies are depth-checked at ingress). */
export function geminiToJsonSchema(schema: unknown, depth = 0): Record<string, unknown> {
  if (!isRecord(schema) || depth > 64) return {};
  const out: Record<string, unknown> = {};
  const type = typeof schema.type === 'string' ? (TO_JSON_TYPE[schema.type.toUpperCase()] ?? undefined) : undefined;
  if (type !== undefined) out.type = schema.nullable === true && type !== 'null' ? [type, 'null'] : type;
  for (const field of SAME_FIELDS) if (schema[field] !== undefined) out[field] = schema[field];
  for (const field of COUNT_FIELDS) {
    const value = Number(schema[field]);
    if (schema[field] !== undefined && Number.isInteger(value) && value >= 0) out[field] = value;
  }
  if (Array.isArray(schema.enum)) out.enum = schema.enum;
  if (schema.example !== undefined) out.examples = [schema.example];
  if (isRecord(schema.properties)) {
    const properties: Record<string, unknown> = {};
    for (const [name, property] of Object.entries(schema.properties)) properties[name] = geminiToJsonSchema(property, depth + 1);
    out.properties = properties;
  }
  if (Array.isArray(schema.required)) out.required = schema.required.filter((name) => typeof name === 'string');
  if (schema.items !== undefined) out.items = geminiToJsonSchema(schema.items, depth + 1);
  if (Array.isArray(schema.anyOf)) out.anyOf = schema.anyOf.map((member) => geminiToJsonSchema(member, depth + 1));
  return out;
}

/**
 * A JSON Schema as Gemini's `Schema`: `type: [t, "null"]` (or an `anyOf` with a null member) is
 * `nullable`, `const` an enum of one, `$ref`s, `additionalProperties` and the other keywords
 * Gemini has no word for are left out (a reference is resolved only when its `$defs` sit in
 * the same document).
 */
export function jsonSchemaToGemini(schema: unknown, root: unknown = schema, depth = 0): Record<string, unknown> {
  if (!isRecord(schema) || depth > 64) return {};
  const resolved = resolveRef(schema, root);
  if (resolved !== schema) return jsonSchemaToGemini(resolved, root, depth + 1);
  const out: Record<string, unknown> = {};
  let types = Array.isArray(schema.type) ? schema.type.filter((t): t is string => typeof t === 'string') : typeof schema.type === 'string' ? [schema.type] : [];
  let members = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (members?.some((member) => isRecord(member) && member.type === 'null')) {
    out.nullable = true;
    members = members.filter((member) => !(isRecord(member) && member.type === 'null'));
    // `anyOf: [X, {type: null}]` is X, nullable.
    if (members.length === 1 && types.length === 0) return { ...jsonSchemaToGemini(members[0], root, depth + 1), nullable: true };
  }
  if (types.includes('null')) {
    out.nullable = true;
    types = types.filter((t) => t !== 'null');
  }
  const type = types.length > 0 ? TO_GEMINI_TYPE[types[0]] : undefined;
  if (type !== undefined) out.type = type;
  for (const field of SAME_FIELDS) if (schema[field] !== undefined) out[field] = schema[field];
  for (const field of COUNT_FIELDS) if (typeof schema[field] === 'number') out[field] = String(schema[field]);
  if (Array.isArray(schema.enum)) out.enum = schema.enum.map(String);
  else if (schema.const !== undefined) out.enum = [String(schema.const)];
  if (out.enum !== undefined && out.type === undefined) out.type = 'STRING';
  if (isRecord(schema.properties)) {
    const properties: Record<string, unknown> = {};
    for (const [name, property] of Object.entries(schema.properties)) properties[name] = jsonSchemaToGemini(property, root, depth + 1);
    out.properties = properties;
    if (out.type === undefined) out.type = 'OBJECT';
  }
  if (Array.isArray(schema.required)) out.required = schema.required.filter((name) => typeof name === 'string');
  if (schema.items !== undefined && !Array.isArray(schema.items)) {
    out.items = jsonSchemaToGemini(schema.items, root, depth + 1);
    if (out.type === undefined) out.type = 'ARRAY';
  }
  if (members && members.length > 0) out.anyOf = members.map((member) => jsonSchemaToGemini(member, root, depth + 1));
  return out;
}

/** `{"$ref":"#/$defs/X"}` (or `#/definitions/X`) as the schema it names in `root`; else the schema itself. */
function resolveRef(schema: Record<string, unknown>, root: unknown): unknown {
  const ref = schema.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return schema;
  let node: unknown = root;
  for (const key of ref.slice(2).split('/')) node = isRecord(node) ? node[key.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
  return isRecord(node) && node !== schema ? node : schema;
}
