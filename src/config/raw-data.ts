import { isRecord } from '../util/is-record.js';
import type { PathSegment } from './errors.js';

// Helpers for reading the parsed YAML before (or without) the schema vouching for its shape.

export { isRecord } from '../util/is-record.js';

/** The value at path, or undefined when any step along it is missing. */
export function valueAt(data: unknown, path: readonly PathSegment[]): unknown {
  let value = data;
  for (const segment of path) {
    if (Array.isArray(value) && typeof segment === 'number') value = value[segment];
    else if (isRecord(value) && Object.hasOwn(value, String(segment))) value = value[String(segment)];
    else return undefined;
  }
  return value;
}
