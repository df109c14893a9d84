import { clientCodec } from '../protocols/registry.js';
import type { ClientProtocol } from '../telemetry/events.js';
import { BodyView } from './body-view.js';
import type { CountTokens } from './types.js';

/** The conversation view of `body` (which it edits in place: pass a copy), or null when the body has no conversation. */
export function viewOf(protocol: ClientProtocol, body: Record<string, unknown>): BodyView | null {
  const view = new BodyView(protocol, body);
  return clientCodec(protocol).describeConversation(body, view) ? view : null;
}

/**
 * The tokens savers measure: every text of the conversation (system prompt, message texts, tool
 * results) and every tool call's arguments, each counted on its own. Exported so that anything
 * that must agree with a saver's measure (a test's fake upstream) counts the same way.
 */
export function contentTokens(protocol: ClientProtocol, body: Record<string, unknown>, count: CountTokens): number {
  return viewOf(protocol, body)?.measure(count) ?? 0;
}
