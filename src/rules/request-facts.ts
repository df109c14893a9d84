import type { IncomingHttpHeaders } from 'node:http';
import { offersTools } from '../protocols/core/client-request.js';
import { PromptCount } from '../protocols/core/prompt-tokens.js';
import type { ClientRequest } from '../protocols/core/types.js';
import { clientCodec } from '../protocols/registry.js';
import { DEFAULT_ENCODING } from '../tokens/count.js';
import { type ClientKind, identifyClient, type RequestClass, requestClass } from './client-class.js';
import { asksThinking, hasImages } from './request-traits.js';

/**
 * One request as rules see it: each fact read on first use and kept, so a fact no rule asks
 * about costs nothing and one several rules ask about is read once.
 */
export class RequestFacts {
  private clientKind: ClientKind | undefined;
  private klass: RequestClass | undefined;
  private thinkingAsked: boolean | undefined;
  private imagesSeen: boolean | undefined;
  private toolsOffered: boolean | undefined;
  private promptCount: PromptCount | undefined;

  /** `bodyBytes`: the body's size as received, the cheap upper bound of its prompt tokens. */
  constructor(
    readonly request: ClientRequest,
    readonly headers: IncomingHttpHeaders,
    readonly bodyBytes: number,
  ) {}

  get model(): string {
    return this.request.model;
  }

  get client(): ClientKind {
    return (this.clientKind ??= identifyClient(this.headers, clientCodec(this.request.protocol).client));
  }

  get class(): RequestClass {
    return (this.klass ??= requestClass(this.client, this.headers, this.request));
  }

  get thinking(): boolean {
    return (this.thinkingAsked ??= asksThinking(this.request.protocol, this.request.body));
  }

  get images(): boolean {
    return (this.imagesSeen ??= hasImages(this.request.body, this.request.protocol));
  }

  get tools(): boolean {
    return (this.toolsOffered ??= offersTools(this.request.body));
  }

  /** The prompt's tokens as the fit check counts them (tools included), counted once. */
  promptTokens(): Promise<number> {
    this.promptCount ??= new PromptCount(this.request);
    return this.promptCount.tokens(DEFAULT_ENCODING);
  }
}
