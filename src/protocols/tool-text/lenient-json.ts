import { createRequire } from 'node:module';

type JsonRepair = (text: string) => string;
const require = createRequire(import.meta.url);
let repairJson: JsonRepair | undefined;

/**
 * JSON as small models write it, read leniently by the `jsonrepair` package (a fence around it,
 * trailing commas, single quotes, unquoted keys, Python's True/False/None, a missing closing
 * bracket at the end). Loaded on first use: an answer that never holds a form never loads it.
 * `repaired`: the text was not strict JSON. Null when not even a repair reads it.
 */
export function readLenient(text: string): { value: unknown; repaired: boolean } | null {
  try {
    return { value: JSON.parse(text), repaired: false };
  } catch {
    // not strict JSON: try a repair
  }
  repairJson ??= (require('jsonrepair') as { jsonrepair: JsonRepair }).jsonrepair;
  try {
    return { value: JSON.parse(repairJson(text)), repaired: true };
  } catch {
    return null;
  }
}
