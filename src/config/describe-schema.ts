import { z } from '#zod';
import type { PathSegment } from './errors.js';
import { ConfigSchema } from './schema.js';

/** The parts of the JSON Schema (from z.toJSONSchema) read here. */
export interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  minItems?: number;
  enum?: unknown[];
  const?: unknown;
  format?: string;
}

let configJsonSchema: JsonSchema | undefined;

/** The tier file's schema for the value at path, or undefined when the schema has nothing there. */
export function schemaAt(path: readonly PathSegment[]): JsonSchema | undefined {
  configJsonSchema ??= z.toJSONSchema(ConfigSchema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  let node: JsonSchema | undefined = configJsonSchema;
  for (const segment of path) {
    if (node?.type === 'array') node = node.items;
    else if (node?.type === 'object') {
      const key = String(segment);
      const extra = node.additionalProperties;
      node = node.properties && Object.hasOwn(node.properties, key) ? node.properties[key] : typeof extra === 'object' ? extra : undefined;
    } else return undefined;
  }
  return node;
}

/** What a value of this schema looks like, in words: "a positive integer", "one of "a", "b"". */
export function describeSchema(schema: JsonSchema | undefined): string {
  if (!schema) return 'a valid value';
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum) {
    const options = schema.enum.map((option) => JSON.stringify(option));
    return options.length === 1 ? options[0] : `one of ${options.join(', ')}`;
  }
  switch (schema.type) {
    case 'integer':
    case 'number':
      return describeNumber(schema);
    case 'string':
      if (schema.format === 'uri') return 'an http:// or https:// URL';
      return schema.minLength ? 'a non-empty string' : 'a string';
    case 'boolean':
      return 'true or false';
    case 'array':
      return schema.minItems ? `a list of at least ${schema.minItems} item${schema.minItems === 1 ? '' : 's'}` : 'a list';
    case 'object':
      return schema.properties ? `a map with keys ${Object.keys(schema.properties).join(', ')}` : 'a map';
    default:
      return 'a valid value';
  }
}

function describeNumber(schema: JsonSchema): string {
  const integer = schema.type === 'integer';
  const noun = integer ? 'an integer' : 'a number';
  const min = schema.minimum;
  // zod writes MAX_SAFE_INTEGER as the maximum of every int: not worth telling anyone.
  const max = schema.maximum !== undefined && schema.maximum < Number.MAX_SAFE_INTEGER ? schema.maximum : undefined;
  if (min !== undefined && max !== undefined) return `${noun} from ${min} to ${max}`;
  if (min === 1 && integer) return 'a positive integer';
  if (min === 0) return `a non-negative ${integer ? 'integer' : 'number'}`;
  if (min !== undefined) return `${noun} of at least ${min}`;
  if (max !== undefined) return `${noun} of at most ${max}`;
  return noun;
}
