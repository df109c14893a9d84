import { findTopLevelObject, findUsageObject } from '../../providers/usage-scan.js';
import { isRecord } from '../../util/is-record.js';
import { EVENT_MALFORMED, type EventFacts } from './event-facts.js';
import type { Usage } from './usage.js';

/**
 * The JSON object of one stream event, with `facts` reset for it; null (and the event marked
 * malformed) when the data is not a JSON object.
 */
export function eventObject(data: string, facts: EventFacts): Record<string, unknown> | null {
  clearFacts(facts);
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    facts.flags = EVENT_MALFORMED;
    return null;
  }
  if (!isRecord(value)) {
    facts.flags = EVENT_MALFORMED;
    return null;
  }
  facts.json = value;
  return value;
}

/** `facts` emptied for the next event (its parts are the reader's to reset). */
export function clearFacts(facts: EventFacts): void {
  facts.flags = 0;
  facts.usage = undefined;
  facts.text = undefined;
  facts.json = undefined;
}

/** A whole answer's JSON object, or null when the body is not one. */
export function bodyObject(body: Buffer): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return isRecord(value) ? value : null;
  } catch {
    return null;
  }
}

/**
 * The usage of a whole answer a relay passes on unchanged, read without parsing the answer
 * (see usage-scan.ts) and converted by the protocol's `convert`; `key`: the usage object's
 * quoted key when it is not `"usage"` (Gemini's `"usageMetadata"`).
 */
export function scannedUsage(body: Buffer, convert: (value: unknown) => Usage | undefined, key?: Buffer): Usage | undefined | 'not_json' {
  const usage = key === undefined ? findUsageObject(body) : findTopLevelObject(body, key);
  if (usage === 'not_json') return usage;
  if (usage === null) return undefined;
  try {
    return convert(JSON.parse(usage));
  } catch {
    return 'not_json';
  }
}

/** A top-level object field of a whole answer other than its usage (`key`: the quoted key's bytes), parsed; undefined when absent or not JSON. */
export function scannedField(body: Buffer, key: Buffer): unknown {
  const text = findTopLevelObject(body, key);
  if (text === null || text === 'not_json') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A stream event's string field naming the model (`event[key]`, or `event[outer][key]`: Anthropic's message_start, Responses' response.created). */
export function eventModel(event: Record<string, unknown>, key: string, outer?: string): string | undefined {
  const holder = outer === undefined ? event : event[outer];
  const model = isRecord(holder) ? holder[key] : undefined;
  return typeof model === 'string' && model !== '' ? model : undefined;
}
