import { isRecord } from '../../util/is-record.js';

/** Keywords whose value is a schema, a list of schemas, or a map of names to schemas. */
const SUBSCHEMA = ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties'];
const SUBSCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
const SUBSCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];

/**
 * A JSON Schema as Gemini's `parametersJsonSchema` and `responseJsonSchema` take it: as written
 * (`$ref`, `$defs`, `additionalProperties` and the rest are theirs), but without `$schema`, the
 * one keyword they refuse, at any level (MCP servers' schemas carry a draft-2020-12 one). Only
 * schema positions are looked into: a property named `$schema`, or a default value that holds
 * one, is kept. The same object when it has none.
 */
export function withoutSchemaDialect(schema: Record<string, unknown>, depth = 0): Record<string, unknown> {
  if (depth > 64) return schema;
  let out: Record<string, unknown> | undefined;
  const set = (key: string, value: unknown): void => {
    out ??= { ...schema };
    out[key] = value;
  };
  if (schema.$schema !== undefined) {
    out = { ...schema };
    delete out.$schema;
  }
  for (const key of SUBSCHEMA) {
    const value = schema[key];
    if (isRecord(value)) {
      const next = withoutSchemaDialect(value, depth + 1);
      if (next !== value) set(key, next);
    } else if (key === 'items' && Array.isArray(value)) {
      const next = listWithout(value, depth);
      if (next !== value) set(key, next);
    }
  }
  for (const key of SUBSCHEMA_LISTS) {
    const value = schema[key];
    if (!Array.isArray(value)) continue;
    const next = listWithout(value, depth);
    if (next !== value) set(key, next);
  }
  for (const key of SUBSCHEMA_MAPS) {
    const value = schema[key];
    if (!isRecord(value)) continue;
    let map: Record<string, unknown> | undefined;
    for (const [name, member] of Object.entries(value)) {
      if (!isRecord(member)) continue;
      const next = withoutSchemaDialect(member, depth + 1);
      if (next === member) continue;
      map ??= { ...value };
      map[name] = next;
    }
    if (map) set(key, map);
  }
  return out ?? schema;
}

function listWithout(list: unknown[], depth: number): unknown[] {
  let out: unknown[] | undefined;
  list.forEach((member, index) => {
    if (!isRecord(member)) return;
    const next = withoutSchemaDialect(member, depth + 1);
    if (next === member) return;
    out ??= list.slice();
    out[index] = next;
  });
  return out ?? list;
}
