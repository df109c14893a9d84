import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../http/json-depth.js';
import { isRecord } from '../../util/is-record.js';

/** Small readers for fields of untrusted JSON, shared by the codecs. */

export function stringField(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/**
 * The entry of `table` a body's value names: only a string, and only the table's own keys (a
 * role of "constructor" or "toString" names nothing). Never converts the value: `String()` of a
 * body's `[{"toString":0}]` throws.
 */
export function entryNamed<T>(table: Readonly<Record<string, T>>, value: unknown): T | undefined {
  return typeof value === 'string' && Object.hasOwn(table, value) ? table[value] : undefined;
}

/** Whether a body's value is one of these names (only a string is; never converted). */
export function isOneOf(names: ReadonlySet<string>, value: unknown): boolean {
  return typeof value === 'string' && names.has(value);
}

export function numberField(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** Sets on `target` each of `values` that is a finite number (a body's sampling controls, by their neutral names). */
export function assignNumbers<K extends string>(target: Partial<Record<NoInfer<K>, number>>, values: Partial<Record<K, unknown>>): void {
  for (const key of Object.keys(values) as K[]) {
    const n = numberField(values[key]);
    if (n !== undefined) target[key] = n;
  }
}

/** A string or an array of strings as an array; undefined for anything else or an empty list. */
export function stringList(value: unknown): string[] | undefined {
  if (typeof value === 'string') return [value];
  if (!Array.isArray(value)) return undefined;
  const list = value.filter((item): item is string => typeof item === 'string');
  return list.length > 0 ? list : undefined;
}

/** Text of a content that is a string or an array of parts with `text` (Chat's and Responses' message content). */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (isRecord(part) && typeof part.text === 'string' ? part.text : '')).join('');
}

/** True when tool arguments (JSON text) nest deeper than a body may. */
export function argumentsTooDeep(text: string): boolean {
  return text.length > 2 * MAX_JSON_DEPTH && nestsDeeperThan(Buffer.from(text));
}

/** JSON text as an object, for tool arguments a protocol wants parsed; {} when it is not an object (or nests too deep to encode again). */
export function parseArguments(text: string): Record<string, unknown> {
  if (argumentsTooDeep(text)) return {};
  try {
    const value: unknown = JSON.parse(text === '' ? '{}' : text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
