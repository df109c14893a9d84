import { ChatRenderer } from '../chat/render.js';
import { TrackedChatRelay } from '../chat/tracked-relay.js';
import type { PartStage, StreamOutput, StreamRenderer } from '../core/types.js';

/**
 * A byte relay a mid-stream recovery can carry on in the same message: each event is also
 * decoded (for the text the client has), and `carryOn` makes the client renderer go on under
 * the ids the relayed stream showed.
 */
export interface ResumableRelay extends StreamOutput {
  carryOn(): void;
}

/**
 * The resumable form of a same-protocol relay, or null when the client's protocol has none (its
 * resume routes render from the start, so the recovery's ids are llm-route's own). Only Chat
 * Completions has one.
 */
export function resumableRelay(relay: StreamOutput, delivered: PartStage, renderer: StreamRenderer): ResumableRelay | null {
  return renderer instanceof ChatRenderer ? new TrackedChatRelay(relay, delivered, renderer) : null;
}
