import type { z } from 'zod';
import { isRecord } from '../../util/is-record.js';

/**
 * A client body checked against its protocol's schema. Most bodies plainly pass: a hand-written
 * check that accepts only what the schema accepts says so without zod's copy of the body (a zod
 * parse was the costliest step of request validation under load). Anything else goes to zod,
 * which judges it and words the problem, so every error message is zod's as before.
 * Returns the body's fields, or the problem as one line of text.
 */
export function checkedBody<T>(body: unknown, schema: z.ZodType<T>, plainlyValid: (body: unknown) => body is T): T | string {
  if (plainlyValid(body)) return body;
  const parsed = schema.safeParse(body);
  return parsed.success ? parsed.data : zodProblem(parsed.error);
}

/** z.string().min(1). */
export function isFilledString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

/** z.boolean().optional(): absent (undefined) or a boolean. */
export function isOptionalBoolean(value: unknown): value is boolean | undefined {
  return value === undefined || typeof value === 'boolean';
}

/** z.string().nullish(). */
export function isNullishString(value: unknown): value is string | null | undefined {
  return value === undefined || value === null || typeof value === 'string';
}

/** z.array(z.looseObject({ [key]: z.string() })): every item an object whose `key` is a string. */
export function isArrayOfTagged(value: unknown, key: string): value is Record<string, unknown>[] {
  if (!Array.isArray(value)) return false;
  for (let i = 0; i < value.length; i++) {
    const item: unknown = value[i];
    if (!isRecord(item) || typeof item[key] !== 'string') return false;
  }
  return true;
}

/** z.array(z.looseObject({})): every item an object. */
export function isArrayOfObjects(value: unknown): value is Record<string, unknown>[] {
  if (!Array.isArray(value)) return false;
  for (let i = 0; i < value.length; i++) if (!isRecord(value[i])) return false;
  return true;
}

/** One line for the first problem zod found in a request body: where, and what was expected. */
function zodProblem(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'the request body is not valid';
  const where = issue.path.length === 0 ? 'the request body' : `"${issue.path.map(String).join('.')}"`;
  return `${where}: ${issue.message}`;
}
