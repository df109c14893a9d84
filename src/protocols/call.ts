import type { IncomingHttpHeaders } from 'node:http';
import type { Tier } from '../config/schema.js';
import { redactSecrets } from '../providers/redact-secrets.js';
import { AnswerToolStage, unwrapAnswerTool } from './translate/answer-tool.js';
import type { AnswerFacts, NeutralRequest, NeutralResponse } from './core/neutral.js';
import { isInvalidSignature, messagesWithoutThinking, neutralWithoutSignedThinking } from './translate/foreign-thinking.js';
import { isReasoningRefusal } from './translate/reasoning.js';
import { EmbeddingJob } from './embeddings/embedding-job.js';
import type { EmbeddingInput } from './core/embedding-codec.js';
import { wireCodec, wireFor } from './registry.js';
import type { ToolTextScope } from './tool-text/scope.js';
import { TextCallOutput } from './tool-text/text-call-output.js';
import { TextCallReader } from './tool-text/text-call-reader.js';
import { recoverWholeAnswer } from './tool-text/whole-answer.js';
import { TranslatedOutput } from './stream-output/translated-output.js';
import {
  isUnsupported,
  type ClientRequest,
  type StatusVerdict,
  type Unsupported,
  type UpstreamAnswer,
  type UpstreamRequest,
  type WireCodec,
} from './core/types.js';
import { readParts, type StreamReader } from './core/event-facts.js';
import type { StreamOutput } from './core/stream-output.js';
import type { ClientCodec } from './core/client-codec.js';
import type { Usage } from './core/usage.js';

const NOT_LAST = (): boolean | undefined => false;

/** A whole answer as the client gets it. */
export interface ShapedAnswer {
  status: number;
  contentType: string;
  body: Buffer;
}

/** An embeddings request's calls to one tier: one per part of its batch, in input order, and the job that makes their answers the client's. */
export interface EmbeddingCalls {
  job: EmbeddingJob;
  parts: readonly UpstreamCall[];
}

/**
 * One request bound to one tier: the wire to call it on, the upstream request, and how the
 * answer reaches the client — relayed as it came when the server speaks the client's own
 * protocol, translated otherwise. Made once per tier; each attempt takes a fresh output.
 */
export class UpstreamCall {
  private constructor(
    private readonly tier: Tier,
    readonly wire: WireCodec,
    readonly request: UpstreamRequest,
    /** Same protocol in and out: the answer's bytes go to the client unchanged. */
    readonly relayed: boolean,
    private readonly client: ClientCodec,
    private readonly clientRequest: ClientRequest,
    /**
     * The request's tool-text scope (its tools, its reports), when this call reads tool calls
     * written as text: not for a tier with `tool_text: off`, llm-route's own answer tool, or a
     * continuation of llm-route's own making (its answer is text already begun).
     */
    private readonly scope: ToolTextScope | null,
    /** An embeddings request's: its batch's calls (this one is the first), whose answers the attempt joins (docs/embeddings.md). */
    readonly embedding: EmbeddingCalls | null = null,
  ) {}

  /**
   * The call for `tier`, or why the tier cannot carry this request. `toolText`: the request's
   * tool-text scope (made once per request: the routing request's), null when it has none.
   */
  static prepare(tier: Tier, client: ClientCodec, request: ClientRequest, toolText: ToolTextScope | null): UpstreamCall | Unsupported {
    if (request.embedding) return UpstreamCall.embeddings(tier, client, request, request.embedding.inputs);
    const wire = wireFor(tier.provider, request.protocol);
    if (request.operation === 'count_tokens') {
      // Only a server that speaks the client's protocol counts its tokens (Messages', Gemini's); llm-route counts them itself otherwise.
      if (wire.protocol !== request.protocol || !wire.countTokensRequest) return { unsupported: `this tier does not count ${request.protocol} tokens` };
      return new UpstreamCall(tier, wire, wire.countTokensRequest(tier.provider, tier, request.body, request.headers), true, client, request, null);
    }
    const scope = toolText !== null && tier.tool_text !== 'off' ? toolText : null;
    if (wire.protocol === request.protocol) {
      const upstream = wire.relayRequest(tier.provider, tier, request.body, request.stream, request.headers, request.endpoint);
      return new UpstreamCall(tier, wire, upstream, true, client, request, scope);
    }
    const neutral = request.neutral();
    if (isUnsupported(neutral)) return neutral;
    const upstream = wire.encodeRequest(tier.provider, tier, neutral, request.stream, request.headers);
    if (isUnsupported(upstream)) return upstream;
    return new UpstreamCall(tier, wire, upstream, false, client, request, upstream.answerTool ? null : scope);
  }

  /**
   * An embeddings request's calls to `tier` with these inputs (its own, or fit's cut of them):
   * one per part of its batch. The first is the one the routing loop holds; an attempt sends them all.
   */
  static embeddings(tier: Tier, client: ClientCodec, request: ClientRequest, inputs: readonly EmbeddingInput[]): UpstreamCall | Unsupported {
    if (!client.embeddings) return { unsupported: 'not an embeddings endpoint' };
    const job = EmbeddingJob.plan(tier, client.embeddings, request, inputs);
    if (isUnsupported(job)) return job;
    const wire = wireCodec(job.wire.protocol);
    const calls: EmbeddingCalls = { job, parts: [] };
    const parts = job.requests.map((upstream) => new UpstreamCall(tier, wire, upstream, job.sameProtocol, client, request, null, calls));
    calls.parts = parts;
    return parts[0];
  }

  /** An embeddings call's batch again with other inputs (fit's cut of them to the tier's window). */
  withInputs(inputs: readonly EmbeddingInput[]): UpstreamCall | Unsupported {
    return UpstreamCall.embeddings(this.tier, this.client, this.clientRequest, inputs);
  }

  /**
   * The same call again without what the tier just refused, when llm-route put it there or
   * another provider made it: the thinking of past turns after "Invalid signature in thinking
   * block" (see foreign-thinking.ts), or a translated reasoning control after a model that
   * does not reason refused it (reasoning.ts). Null when the refusal is none of these.
   */
  retryWithout(status: number | undefined, message: string): UpstreamCall | null {
    const { tier, wire, clientRequest: request } = this;
    if (this.embedding) return null;
    if (!this.relayed && isReasoningRefusal(status, message)) {
      const neutral = request.neutral();
      if (!isUnsupported(neutral) && neutral.reasoningEffort) {
        const upstream = wire.encodeRequest(tier.provider, tier, { ...neutral, reasoningEffort: undefined }, request.stream, request.headers);
        if (!isUnsupported(upstream)) {
          upstream.dropped = `reasoning effort "${neutral.reasoningEffort}": the tier refused it (HTTP 400), sent again without it`;
          return new UpstreamCall(tier, wire, upstream, false, this.client, request, upstream.answerTool ? null : this.scope);
        }
      }
    }
    if (!wire.signsThinking || !isInvalidSignature(status, message)) return null;
    if (this.relayed) {
      const body = messagesWithoutThinking(request.body);
      return (
        body &&
        new UpstreamCall(tier, wire, wire.relayRequest(tier.provider, tier, body, request.stream, request.headers), true, this.client, request, this.scope)
      );
    }
    const neutral = request.neutral();
    const stripped = isUnsupported(neutral) ? null : neutralWithoutSignedThinking(neutral);
    if (!stripped) return null;
    const upstream = wire.encodeRequest(tier.provider, tier, stripped, request.stream, request.headers);
    return isUnsupported(upstream) ? null : new UpstreamCall(tier, wire, upstream, false, this.client, request, upstream.answerTool ? null : this.scope);
  }

  /**
   * The call for `tier` with a neutral request of llm-route's own making (a mid-stream
   * resume's continuation): always encoded for the tier's wire, never relayed.
   */
  static encoded(tier: Tier, client: ClientCodec, request: ClientRequest, neutral: NeutralRequest): UpstreamCall | Unsupported {
    const wire = wireFor(tier.provider, request.protocol);
    const upstream = wire.encodeRequest(tier.provider, tier, neutral, request.stream, request.headers);
    if (isUnsupported(upstream)) return upstream;
    return new UpstreamCall(tier, wire, upstream, false, client, request, null);
  }

  /** The model an answer rendered from this call names: its tier's, never the route's name (docs/protocols.md, "Relay or translation"). */
  get model(): string {
    return this.tier.model;
  }

  /**
   * A fresh reader of one attempt's stream: the wire's, behind the hold of tool calls written as
   * text when the request has tools. `last`: whether the tier is the last this request will try.
   */
  streamReader(last: () => boolean | undefined = NOT_LAST): StreamReader {
    const reader = this.wire.reader();
    const scope = this.scope;
    return scope ? new TextCallReader(reader, scope, { name: this.tier.name, isLast: last }, this.relayed) : reader;
  }

  /** A fresh stream output for one attempt. */
  streamOutput(): StreamOutput {
    if (this.relayed) {
      const relay = this.client.relay(this.clientRequest);
      // A relay whose answer may turn out to be a call written as text waits for the reader's decision.
      if (!this.scope) return relay;
      return new TextCallOutput(relay, () => this.client.renderer(this.clientRequest, this.model), this.client.handover(this.clientRequest, this.model));
    }
    const renderer = this.client.renderer(this.clientRequest, this.model);
    return this.request.answerTool ? new TranslatedOutput(renderer, new AnswerToolStage(readParts, this.request.answerTool)) : new TranslatedOutput(renderer);
  }

  /**
   * A whole 2xx answer for the client, with its usage; 'not_json' when the body is not an
   * answer; `badToolCall` when its text is a tool call the client cannot run (see tool-text/);
   * 'undecided' when that depends on whether the tier is the last (`last`), not known yet.
   */
  unaryAnswer(
    status: number,
    contentType: string,
    body: Buffer,
    last: () => boolean | undefined = NOT_LAST,
  ): { answer: ShapedAnswer; usage: Usage | undefined; facts?: () => AnswerFacts } | 'not_json' | { badToolCall: string } | 'undecided' {
    // One part of an embeddings batch: its body as it came, for the attempt to join with the others (EmbeddingJob.finish).
    if (this.embedding) return { answer: { status, contentType, body }, usage: undefined };
    const scope = this.scope;
    if (scope) {
      const response = this.decodeResponse(body);
      const recovered = response === 'not_json' ? null : recoverWholeAnswer(response, scope, { name: this.tier.name, isLast: last });
      if (recovered === 'undecided' || (recovered && 'badToolCall' in recovered)) return recovered;
      if (recovered)
        return {
          answer: { status, contentType: 'application/json', body: Buffer.from(this.client.renderResponse(recovered, this.clientRequest, this.model)) },
          usage: recovered.usage,
          facts: () => factsOf(recovered),
        };
    }
    if (this.relayed) {
      const usage = this.wire.readUsage(body);
      if (usage === 'not_json') return usage;
      // Its model and finish: decoded only when asked (traces, as its spans are made off the request path).
      return { answer: { status, contentType, body }, usage, facts: () => factsOf(this.decodeResponse(body)) };
    }
    const response = this.decodeResponse(body);
    if (response === 'not_json') return response;
    const rendered = Buffer.from(this.client.renderResponse(response, this.clientRequest, this.model));
    return { answer: { status, contentType: 'application/json', body: rendered }, usage: response.usage, facts: () => factsOf(response) };
  }

  /**
   * Whose fault a non-2xx answer is: the wire's verdict, its words cut of every secret (the
   * provider's key, the client's credential). A 401/403 from a provider sent the client's own
   * credential is that credential's fault: the next tier is tried, and the tier's health is
   * not concerned.
   */
  classifyStatus(status: number, body: string, headers: IncomingHttpHeaders): StatusVerdict {
    const verdict = this.wire.classifyStatus(status, body, headers);
    const message = this.redact(verdict.message);
    if (verdict.reason === 'auth' && this.tier.provider.from_client) return { ...verdict, reason: 'credential_rejected', message, healthNeutral: true };
    return message === verdict.message ? verdict : { ...verdict, message };
  }

  /** `text` without the provider's key and the client's credential (an upstream's words may echo either). */
  redact(text: string): string {
    return redactSecrets(text, this.tier.provider, this.clientRequest.headers.credential?.secrets);
  }

  /** A payload-fault answer for the client: as it came when relayed (cut of every secret), else in the client's shape with the upstream's words. */
  rejection(upstream: UpstreamAnswer, message: string): ShapedAnswer {
    if (this.relayed) {
      const type = upstream.headers['content-type'];
      const text = upstream.body.toString('utf8');
      const redacted = this.redact(text);
      const body = redacted === text ? upstream.body : Buffer.from(redacted);
      return { status: upstream.status, contentType: typeof type === 'string' ? type : 'application/json', body };
    }
    return { status: upstream.status, contentType: 'application/json', body: Buffer.from(this.client.translateRejection(upstream.status, message)) };
  }

  /** Whether tool calls written as text are read in this call's answers (the request offers tools, the tier does not turn it off). */
  get readsToolText(): boolean {
    return this.scope !== null;
  }

  private decodeResponse(body: Buffer): NeutralResponse | 'not_json' {
    const response = this.wire.decodeResponse(body);
    return response !== 'not_json' && this.request.answerTool ? unwrapAnswerTool(response, this.request.answerTool) : response;
  }

  /** The text of a whole answer, for a token estimate when the upstream reported no usage. */
  answerText(body: Buffer): string {
    if (this.embedding) return '';
    const response = this.decodeResponse(body);
    if (response === 'not_json') return '';
    return response.content.map((part) => (part.type === 'tool_call' ? `${part.name}${part.arguments}` : part.text)).join('');
  }
}

/** What a decoded whole answer says of itself: the upstream's model name and its (settled) finish. */
function factsOf(response: NeutralResponse | 'not_json'): AnswerFacts {
  if (response === 'not_json') return {};
  return response.model === undefined ? { finish: response.finishReason } : { model: response.model, finish: response.finishReason };
}
