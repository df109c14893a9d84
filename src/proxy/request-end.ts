import type { IncomingMessage } from 'node:http';
import type { ClientCodec } from '../protocols/core/client-codec.js';
import { stringField } from '../protocols/core/fields.js';
import type { EmbeddingsDone, RequestFinished, RequestOutcome } from '../telemetry/events.js';
import type { RoutingRequest } from './routing.js';

/** What a request's end may carry beside its tier, status and outcome: how it went, and what was learned on the way. */
type FinishHow = 'ttftMs' | 'usage' | 'estimate' | 'chunkErrors' | 'committed' | 'error' | 'attempts' | 'finishReason' | 'responseModel' | 'answerFacts';
type FinishLearned = 'resumed' | 'promptTruncated' | 'toolText' | 'hedged' | 'loserUsage';
export type FinishFields = Pick<RequestFinished, 'tier' | 'status' | 'outcome'> &
  Partial<Pick<RequestFinished, FinishHow | FinishLearned>> & {
    /** An embeddings answer's width and inputs cut (its inputs are the request's). */
    embeddings?: Omit<EmbeddingsDone, 'inputs'>;
  };

/** How a request that ends on an error of llm-route's own is recorded. */
export interface Failure {
  outcome: RequestOutcome;
  attempts?: RequestFinished['attempts'];
  /** The tier at work when it ended, if any. */
  tier?: string | null;
  /** The log's words, when they differ from the client's (shorter, or without what the client chose). */
  logged?: string;
}

/** What the end of a request reads of its exchange. */
export interface Ending {
  readonly id: string;
  readonly codec: ClientCodec;
  readonly startedAt: number;
  readonly arrivedAt: number;
  /** Its routing, once it began (a request refused before it has none). */
  readonly begun: RoutingRequest | null;
  /** The client's HTTP request (its path and trace context go on the record). */
  readonly incoming: IncomingMessage;
}

/** The request's one `request_end` event: how it ended (`fields`), and what its routing learned on the way. */
export function requestEnd(ending: Ending, fields: FinishFields): RequestFinished {
  const routed = ending.begun;
  const tier = fields.tier === null ? undefined : routed?.route.tiers.find((t) => t.name === fields.tier);
  // Every key, always, in one order (absent ones undefined): each request's event then has the
  // same hidden class, and every subscriber's property reads stay monomorphic. Spread from
  // whichever fields an ending had, they came in dozens of shapes.
  return {
    type: 'request_end',
    id: ending.id,
    route: routed?.route.name ?? '',
    tier: fields.tier,
    status: fields.status,
    outcome: fields.outcome,
    stream: routed?.request.stream ?? false,
    committed: fields.committed ?? false,
    attempts: fields.attempts ?? [],
    ttftMs: fields.ttftMs,
    durationMs: performance.now() - ending.arrivedAt,
    startedAt: ending.startedAt,
    protocol: ending.codec.protocol,
    provider: tier?.provider.name ?? null,
    model: tier?.model ?? null,
    usage: fields.usage,
    estimate: fields.estimate,
    savers: routed?.savers,
    rule: routed?.rule,
    affinity: routed?.affinity ? true : undefined,
    chunkErrors: fields.chunkErrors ?? 0,
    error: fields.error,
    resumed: fields.resumed,
    hedged: fields.hedged,
    loserUsage: fields.loserUsage,
    promptTruncated: fields.promptTruncated,
    toolText: fields.toolText,
    credential: tier?.provider.from_client ? 'client' : undefined,
    // The agent session the client named (a request that never began has none).
    session: routed ? ending.codec.session(routed.request) : undefined,
    http: {
      // The path only: a query may carry a key (Gemini's `?key=`), and no subscriber needs one.
      path: ending.incoming.url?.split('?', 1)[0],
      traceparent: stringField(ending.incoming.headers.traceparent),
      tracestate: stringField(ending.incoming.headers.tracestate),
    },
    maxTokens: routed ? ending.codec.askedMaxTokens(routed.request.body) : undefined,
    finishReason: fields.finishReason,
    responseModel: fields.responseModel,
    answerFacts: fields.answerFacts,
    embeddings: routed?.request.embedding ? { inputs: routed.request.embedding.inputs.length, ...fields.embeddings } : undefined,
  };
}
