import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config, Route, Tier } from '../config/schema.js';
import type { AppContext } from '../control/app-context.js';
import type { ShapedAnswer } from '../protocols/call.js';
import type { ClientCodec, ClientRequest, ErrorSpec } from '../protocols/core/client-codec.js';
import type { ProviderPools } from '../providers/pools.js';
import type { StoredAnswer } from '../state/types.js';
import type { SaverMeasure } from '../telemetry/events.js';
import { AnswerCapture } from './answer-capture.js';
import { ownHeaders, replayHeaders, streamHeaders, wholeAnswerHeaders } from './answer-headers.js';
import { ClientLifetime } from '../util/client-lifetime.js';
import { RequestHolds } from './request-holds.js';
import { type Failure, type FinishFields, requestEnd } from './request-end.js';
import { type Arrival, RoutingRequest } from './routing.js';
import { isShutdown } from './shutdown.js';
import { ResponseSink, type StreamSink } from './stream-sink.js';

/**
 * What the request path sees of the running app: its config and pools only through the
 * snapshot an exchange takes at arrival (a reload replaces the app's, never a request's).
 */
export type ProxyView = Pick<AppContext, 'snapshot' | 'gate' | 'telemetry' | 'random' | 'affinity' | 'spaces' | 'state' | 'inFlight' | 'streams'>;

/** What a request's answer is written through: its ways out to the client and its one end (answer-request.ts). */
export type ClientAnswer = Pick<Exchange, 'id' | 'codec' | 'config' | 'routing' | 'ttftMs' | 'respond' | 'respondJson' | 'fail' | 'endAborted' | 'finish'>;

/** What a request's Idempotency-Key does with it: keeps its answer, replays a stored one, or refuses it (idempotent-request.ts). */
export type AnswerKeeping = Pick<Exchange, 'id' | 'client' | 'keepAnswer' | 'keptAnswer' | 'ending' | 'replay' | 'fail' | 'finish' | 'endAborted'>;

/**
 * One request's life: the config and pools it was taken under (a snapshot taken at its
 * arrival, before its body is read, so a reload meanwhile never mixes one config's host
 * with another's key), the client's protocol, and the response. Everything the client
 * receives goes out through here (a stream's bytes through the sink its commit returns), and
 * it ends with exactly one `request_end`. What is known at arrival is fixed at construction;
 * the route and request once, at `begin`, which makes the request's routing (what it holds
 * at its tiers, what it learns on the way); the rest only through the methods below.
 */
export class Exchange implements Arrival {
  readonly arrivedAt = performance.now();
  readonly startedAt = Date.now();
  readonly config: Config;
  readonly pools: ProviderPools;
  readonly client = new ClientLifetime();
  private routed: RoutingRequest | null = null;
  /** Milliseconds from arrival to the commit of a stream. */
  private committedAfterMs: number | undefined;
  /** For a request with an Idempotency-Key that runs: what the client gets is also kept here. */
  private capture: AnswerCapture | null = null;
  /** How the request ended (its request_end fields), once it has. */
  private endedWith: FinishFields | null = null;
  /** Counted as a request (request_start/request_end); a token count is not. */
  private announced = true;

  constructor(
    private readonly app: ProxyView,
    private readonly res: ServerResponse,
    readonly codec: ClientCodec,
    readonly id: string,
  ) {
    const snapshot = app.snapshot();
    this.config = snapshot.config;
    this.pools = snapshot.pools;
  }

  /**
   * The request is routable: it now counts as in flight, and the client's leaving aborts it.
   * Returns its routing, made here once: a request for a model holds its tiers' limits and
   * budgets through it (a token count does not). `announce: false` keeps it out of the request
   * events (a token count is not a request for a model); `learned`: what its ingress found out
   * (the token savers' measures, the rule that chose the route, the body's size).
   */
  begin(
    route: Route,
    request: ClientRequest,
    learned: { announce?: boolean; savers?: SaverMeasure[]; rule?: string | number; bytes?: number } = {},
  ): RoutingRequest {
    const announce = learned.announce ?? true;
    this.announced = announce;
    const holds = announce ? RequestHolds.for(route, this.config, this.app.state, request) : null;
    const routed = new RoutingRequest(this, route, request, this.app.telemetry, holds, learned);
    this.routed = routed;
    this.res.once('close', this.onClose);
    // A client that left while the body was read or the savers ran: its 'close' has passed.
    if (this.res.destroyed) this.onClose();
    this.app.inFlight.add(this.client);
    if (announce) this.app.telemetry.emit({ type: 'request_start', id: this.id, route: route.name, stream: request.stream, protocol: this.codec.protocol });
    return routed;
  }

  /** The request's routing, made at `begin` (asked only after it). */
  get routing(): RoutingRequest {
    if (!this.routed) throw new Error('the request has not begun');
    return this.routed;
  }

  /** Its routing once it began, else null. */
  get begun(): RoutingRequest | null {
    return this.routed;
  }

  /** The client's HTTP request. */
  get incoming(): IncomingMessage {
    return this.res.req;
  }

  /** A whole answer made by llm-route itself (not a tier's). */
  respondJson(status: number, value: unknown, headers: Record<string, string> = {}): void {
    const body = JSON.stringify(value);
    this.res.writeHead(status, ownHeaders(this.id, this.routed?.route.name ?? null, headers, body));
    this.res.end(body);
  }

  /** Milliseconds from arrival to the commit of a stream (undefined before, or without one). */
  get ttftMs(): number | undefined {
    return this.committedAfterMs;
  }

  /** How the request ended (its request_end fields), once it has. */
  get ending(): FinishFields | null {
    return this.endedWith;
  }

  /** From now on what the client gets is also kept, for the request's Idempotency-Key record. */
  keepAnswer(): void {
    this.capture = new AnswerCapture();
  }

  /** The answer kept since `keepAnswer`; null when none was kept, nothing went out or it was too large. */
  keptAnswer(): StoredAnswer | null {
    return this.capture?.answer() ?? null;
  }

  /** The commit step of a stream: the client's status and headers, and the sink the relay writes to. */
  commit(tier: Tier, attempts: number): StreamSink {
    const ttftMs = performance.now() - this.arrivedAt;
    this.committedAfterMs = ttftMs;
    const route = this.routeName();
    this.app.telemetry.emit({ type: 'commit', id: this.id, route, tier: tier.name, ttftMs });
    const headers = streamHeaders(this.id, route, tier.name, attempts, ttftMs, this.routed?.request.streamType ?? this.codec.streamType);
    this.res.writeHead(200, headers);
    this.capture?.head(200, headers);
    return new ResponseSink(this.res, this.capture);
  }

  /** A whole answer (a tier's, or its payload-fault rejection), with the routing headers. */
  respond(answer: ShapedAnswer, tier: Tier, attempts: number): void {
    const headers = wholeAnswerHeaders(this.id, this.routeName(), tier.name, attempts, answer);
    this.res.writeHead(answer.status, headers);
    this.res.end(answer.body);
    if (this.capture) {
      this.capture.head(answer.status, headers);
      this.capture.add(answer.body);
    }
  }

  /** An answer stored under the request's Idempotency-Key, as it first went out (a stream: the same SSE bytes). */
  replay(answer: StoredAnswer): void {
    this.res.writeHead(answer.status, replayHeaders(this.id, answer));
    this.res.end(answer.body);
  }

  /** The request ends on an error of llm-route's own: the client gets it in its protocol, and the request's end says why. */
  fail(error: ErrorSpec, failure: Failure, headers: Record<string, string | number> = {}): void {
    this.respondError(error, headers);
    this.finish({
      tier: failure.tier ?? null,
      status: error.status,
      outcome: failure.outcome,
      attempts: failure.attempts,
      error: failure.logged ?? error.message,
    });
  }

  /** An error made by llm-route itself, in the client's protocol. */
  private respondError(error: ErrorSpec, headers: Record<string, string | number>): void {
    const res = this.res;
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const body = this.codec.errorBody(error);
    res.writeHead(error.status, ownHeaders(this.id, this.routed?.route.name ?? null, headers, body));
    res.end(body);
  }

  /** The client is gone before an answer: nothing to write, the socket is closed. */
  drop(): void {
    this.res.destroy();
  }

  /**
   * The request was aborted before an answer: a client that left hears nothing; a server that
   * is stopping tells its client so (503), as every request gets an answer. `tier`: the one
   * that was at work on it then, if any.
   */
  endAborted(attempts: FinishFields['attempts'] = [], tier: string | null = null): void {
    if (!isShutdown(this.client.reason)) {
      this.drop();
      return this.finish({ tier, status: 499, outcome: 'client_abort', attempts });
    }
    this.fail(
      { status: 503, kind: 'overloaded', code: 'shutting_down', message: 'llm-route is shutting down; try again' },
      { outcome: 'failed', attempts, tier, logged: 'shutting down' },
    );
  }

  /** The one `request_end` of this request. */
  finish(fields: FinishFields): void {
    if (this.endedWith) return;
    this.endedWith = fields;
    if (this.announced) this.app.telemetry.emit(requestEnd(this, fields));
  }

  /** Releases what the request held: its holds at its tiers (every one still open ends here), its pools, its place among the requests in flight. */
  close(): void {
    this.routed?.holds?.end();
    this.pools.release();
    this.app.inFlight.delete(this.client);
    this.res.off('close', this.onClose);
  }

  /** The route's name: '' before `begin` (only a request that began commits or is answered by a tier). */
  private routeName(): string {
    return this.routed?.route.name ?? '';
  }

  private readonly onClose = (): void => {
    if (!this.res.writableFinished) this.client.abort();
  };
}
