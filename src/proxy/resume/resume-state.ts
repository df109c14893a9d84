import type { UpstreamCall } from '../../protocols/call.js';
import { TranslatedOutput } from '../../protocols/translated-output.js';
import type { ClientCodec, ClientRequest, StreamOutput, StreamRenderer } from '../../protocols/types.js';
import type { AttemptError } from '../attempt-error.js';
import { DeliveredText } from './delivered-text.js';

/** Breaks a recovery can mend: the connection broke or closed unfinished, or the upstream stalled. */
const RECOVERABLE = new Set<AttemptError['reason']>(['broken_stream', 'idle_timeout']);

/**
 * A stream on a resume route, as its first attempt leaves it. Its events are rendered in the
 * client's protocol (even when the tier speaks it: a relayed stream's ids are the upstream's,
 * and a recovery could not go on under them), so the renderer holds the message's ids, block
 * and item indexes and sequence numbers, and a recovery renders its text with the same one:
 * one message, no seam. Routes without resume never make one (their streams relay bytes).
 */
export class ResumeState {
  readonly renderer: StreamRenderer;
  readonly delivered: DeliveredText;
  readonly output: StreamOutput;

  constructor(call: UpstreamCall, codec: ClientCodec, request: ClientRequest) {
    this.renderer = codec.renderer(request);
    this.delivered = new DeliveredText(call.wire.decoder());
    this.output = new TranslatedOutput(this.delivered, this.renderer);
  }

  /** The first attempt's `keepOpen`: a break inside a text run leaves the client's response open. */
  readonly keepOpen = (err: AttemptError): boolean => RECOVERABLE.has(err.reason) && this.delivered.resumable;
}
