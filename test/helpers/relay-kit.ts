import type { Tier } from '../../src/config/schema.js';
import type { AttemptError } from '../../src/proxy/attempt-error.js';
import type { StallWatch } from '../../src/proxy/silence-guard.js';
import { type StreamEnd, StreamRelay } from '../../src/proxy/stream-relay.js';
import { StreamTally } from '../../src/proxy/stream-tally.js';
import type { UpstreamDispatch } from '../../src/proxy/upstream-dispatch.js';
import { TelemetryBus } from '../../src/telemetry/bus.js';
import { ClientLifetime } from '../../src/util/client-lifetime.js';
import { chatCall, RecordingSink, tierAt } from './proxy-parts.js';

// A committed Chat stream's relay, driven by hand: the chat wire's real framer, output and
// reader, a recording sink, and a recording stand-in for the dispatch side it steers.

/** What the relay asks of its upstream call, recorded in order. */
export class DispatchSide implements Pick<UpstreamDispatch, 'elapsedMs' | 'pause' | 'resume' | 'cancel' | 'lingerFor' | 'finish'> {
  readonly calls: string[] = [];
  readonly cancelledWith: Error[] = [];
  constructor(readonly elapsedMs = 0) {}
  pause(): void {
    this.calls.push('pause');
  }
  resume(): void {
    this.calls.push('resume');
  }
  cancel(reason: Error): void {
    this.calls.push('cancel');
    this.cancelledWith.push(reason);
  }
  lingerFor(ms: number): void {
    this.calls.push(`linger ${ms}`);
  }
  finish(): void {
    this.calls.push('finish');
  }
}

export interface Relayed {
  relay: StreamRelay;
  sink: RecordingSink;
  dispatch: DispatchSide;
  client: ClientLifetime;
  /** The end, once the relay settled (null until then). */
  end(): StreamEnd | null;
}

export interface RelayOptions {
  timeouts?: Partial<Tier['timeouts']>;
  elapsedMs?: number;
  keepOpen?: (err: AttemptError) => boolean;
  stall?: StallWatch;
}

/** A relay taking over after `held` went to the client at commit. */
export function relayAfter(held: string, opts: RelayOptions = {}): Relayed {
  const tier = tierAt('http://127.0.0.1:1/v1', { idle_ms: 1_000, ...opts.timeouts });
  const call = chatCall(tier);
  const sink = new RecordingSink();
  const dispatch = new DispatchSide(opts.elapsedMs);
  const client = new ClientLifetime();
  const tally = new StreamTally(call.streamReader(), new TelemetryBus(), 'chat', tier.name);
  const relay = new StreamRelay(
    { tier, client, output: call.streamOutput(), keepOpen: opts.keepOpen, stall: opts.stall },
    dispatch as unknown as UpstreamDispatch,
    call.wire.framer(),
    tally,
    sink,
    Buffer.from(held),
  );
  let ended: StreamEnd | null = null;
  void relay.finished.then((end) => (ended = end));
  return { relay, sink, dispatch, client, end: () => ended };
}

/** Lets the client writer's queued write (a microtask) and the relay's settling run. */
export const turn = async (): Promise<void> => {
  for (let i = 0; i < 3; i++) await Promise.resolve();
};

export const errorMessageOf = (tail: Buffer | null | undefined): string => JSON.parse((tail?.toString() ?? '').replace(/^data: /, '').trim()).error.message;
