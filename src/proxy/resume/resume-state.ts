import type { UpstreamCall } from '../../protocols/call.js';
import { TranslatedOutput } from '../../protocols/stream-output/translated-output.js';
import { readParts } from '../../protocols/core/event-facts.js';
import type { ClientRequest } from '../../protocols/core/types.js';
import type { StreamOutput, StreamRenderer } from '../../protocols/core/stream-output.js';
import type { ClientCodec, ResumableRelay } from '../../protocols/core/client-codec.js';
import type { AttemptError } from '../attempt-error.js';
import type { StallConfig } from '../../config/schema.js';
import type { StallWatch } from '../silence-guard.js';
import { DeliveredText } from './delivered-text.js';

/** Breaks a resume can mend: the connection broke or closed unfinished, or the upstream stalled (idle_ms, or by its own pace). */
const RESUMABLE = new Set<AttemptError['reason']>(['broken_stream', 'idle_timeout', 'stall_timeout']);

/**
 * A stream on a resume route, as its first attempt leaves it: the text the client has, and a
 * renderer that goes on in the client's protocol under the ids and indexes the client has
 * seen, so a resume's text is the rest of the same message. A relayed stream stays a byte
 * relay where the protocol can carry one on (its events are only decoded, for the text; the
 * renderer takes over its ids); any other stream is rendered by the client codec's renderer
 * from the start (its ids, block and item indexes, sequence numbers are llm-route's, so the
 * resume carries them on). Routes without resume never make one.
 */
export class ResumeState {
  readonly renderer: StreamRenderer;
  readonly delivered: DeliveredText;
  readonly output: StreamOutput;
  /** The learned stall: called only where a resume could mend the stream (a guess never cuts one nothing can continue). */
  readonly stall: StallWatch;
  private readonly relay: ResumableRelay | null;

  constructor(call: UpstreamCall, codec: ClientCodec, request: ClientRequest, stall: StallConfig) {
    this.renderer = codec.renderer(request, call.model);
    this.delivered = new DeliveredText(readParts);
    this.relay = call.relayed ? (codec.resumableRelay?.(call.streamOutput(), this.delivered, this.renderer) ?? null) : null;
    this.output = this.relay ?? new TranslatedOutput(this.renderer, this.delivered);
    this.stall = { rule: stall, mendable: () => this.delivered.resumable };
  }

  /** The first attempt's `keepOpen`: a break inside a text run leaves the client's response open. */
  readonly keepOpen = (err: AttemptError): boolean => RESUMABLE.has(err.reason) && this.delivered.resumable;

  /** The renderer a resume writes with, carrying on what the client has. */
  resumeRenderer(): StreamRenderer {
    this.relay?.carryOn();
    return this.renderer;
  }
}
