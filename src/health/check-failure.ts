import type { Provider } from '../config/schema.js';
import { networkFailure } from '../util/network-error.js';
import type { Deadline } from './deadline.js';

/** A failure whose message is already meant for the user. */
export class CheckFailure extends Error {}

/** One line saying why `step` failed: the deadline, a cancel, a known network error, or the error's own message. */
export function describeFailure(error: unknown, deadline: Deadline, provider: Provider, step: string): string {
  if (deadline.timedOut) return `no answer within ${deadline.timeoutMs} ms (${step})`;
  if (deadline.cancelled) return `cancelled (${step})`;
  if (error instanceof CheckFailure) return error.message;
  const known = networkFailure(error).says;
  const host = new URL(provider.base_url).host;
  if (known) return `${known} (${host})`;
  return `${error instanceof Error ? error.message : String(error)} (${host}, ${step})`;
}
