import { nodeCrypto } from './node-crypto.js';

/**
 * JSON with every object's keys sorted, so two documents that differ only in key order are
 * the same text. Arrays keep their order (it means something).
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.keys(value as Record<string, unknown>)
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(',')}}`;
}

/** sha256 (hex) of the canonical JSON of `value`, after `scope` (what the same body means differently under). */
export function jsonFingerprint(scope: string, value: unknown): string {
  return nodeCrypto().createHash('sha256').update(scope).update('\u0000').update(canonicalJson(value)).digest('hex');
}
