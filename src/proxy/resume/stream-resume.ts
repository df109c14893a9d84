import type { Tier } from '../../config/schema.js';
import { UpstreamCall } from '../../protocols/call.js';
import type { NeutralMessage, NeutralRequest } from '../../protocols/core/neutral.js';
import { TranslatedOutput } from '../../protocols/stream-output/translated-output.js';
import { isUnsupported } from '../../protocols/core/types.js';
import { readParts } from '../../protocols/core/event-facts.js';
import { type AttemptSite, openTier, type Prepare, startStream } from '../attempt-start.js';
import { redactSecrets } from '../../providers/redact-secrets.js';
import type { ResumedStream } from '../../telemetry/events.js';
import { AttemptError } from '../attempt-error.js';
import type { RoutingRequest } from '../routing.js';
import type { CommitResult, StreamAttempt } from '../stream-attempt.js';
import type { StreamEnd } from '../stream-relay.js';
import type { CommitPort, StreamSink } from '../stream-sink.js';
import { ResumeDecoder, type ResumeMeans } from './resume-decoder.js';
import type { ResumeState } from './resume-state.js';

export interface ResumeInput {
  /** The request's attempts start here, the resume's as any other (fit, limits, budgets, TTFT budget). */
  site: AttemptSite;
  state: ResumeState;
  /** The request's plan, and where in it the committed tier stands. */
  plan: Tier[];
  at: number;
}

type Run = (CommitResult | { committed: false; error: AttemptError; refused: string }) & { diverged: () => boolean };

/**
 * Mid-stream resume (docs/resume.md): when the committed stream of a
 * resume route broke inside its text, one more attempt on the resume tier (the next in the
 * plan, else the same one if its retry rules allow another try) goes on writing to the same
 * client response through the same renderer: by continuation where the tier takes a prefill,
 * else (or when it refuses the prefill with a 400) by a verified replay. Whatever goes wrong
 * ends the stream with the protocol's error event, as a route without resume would.
 */
export class StreamResume {
  /** What happened, for the request's log line, usage row and metric; null when nothing was resumed. */
  resumed: ResumedStream | null = null;

  constructor(private readonly input: ResumeInput) {}

  /**
   * The stream's end: the first attempt's `end`, or the resume's when the first was left open
   * for one. The resume's tier is charged its own part of the answer; the first tier's part
   * is its own end's (the caller charges it).
   */
  async finish(end: StreamEnd): Promise<StreamEnd> {
    const sink = end.open;
    if (!sink || !end.interruption) return end;
    const { state, plan, at, site } = this.input;
    const delivered = state.delivered.text();
    let refused: string | null = null;
    for (const tier of this.resumeTiers()) {
      const how: ResumeMeans = tier.prefill ? 'continue' : 'replay';
      let run = await this.run(tier, how, delivered, sink, tier === plan[at]);
      // Not sent (too long for it, or llm-route's own limit or budget said no): the next candidate.
      if (!run.committed && 'refused' in run) {
        refused = `its resume on tier ${tier.name} was refused: ${run.refused}`;
        continue;
      }
      const resumed: ResumedStream = { from: plan[at].name, to: tier.name, how, why: whyOf(end.interruption), at_chars: delivered.length, result: 'failed' };
      this.resumed = resumed;
      // A tier that refuses the prefill (current Claude models do) is asked the plain request instead.
      if (!run.committed && how === 'continue' && (run.error.status === 400 || run.error.reason === 'unsupported')) {
        resumed.how = 'replay';
        run = await this.run(tier, 'replay', delivered, sink, true);
      }
      if (!run.committed) {
        site.req.log.left(tier);
        resumed.result = run.diverged() ? 'diverged' : 'failed';
        // Upstream words can echo the key; they go to the client here.
        const why = 'refused' in run ? run.refused : redactSecrets(run.error.message, tier.provider, site.req.request.headers.credential?.secrets);
        return this.giveUp(end, sink, `${end.interruption.message}; its resume on tier ${tier.name} failed: ${why}`, run.error);
      }
      return this.second(end, run, resumed, tier);
    }
    return this.giveUp(end, sink, refused ? `${end.interruption.message}; ${refused}` : end.interruption.message);
  }

  /** The resume's own stream, to its end; its tier is charged what it used itself (on the tier that broke: added to that one's part). */
  private async second(end: StreamEnd, run: Run & CommitResult & { committed: true }, resumed: ResumedStream, tier: Tier): Promise<StreamEnd> {
    const second = await run.relay.finished;
    this.input.site.req.log.spent(tier, second.usage, second.text);
    resumed.result = second.interruption ? (run.diverged() ? 'diverged' : 'failed') : 'ok';
    return {
      interruption: second.interruption,
      usage: second.usage ?? end.usage,
      chunkErrors: end.chunkErrors + second.chunkErrors,
      text: resumed.how === 'continue' ? end.text + second.text : second.text,
      finishReason: second.finishReason,
      responseModel: second.responseModel,
      open: null,
    };
  }

  /** The next tiers in the plan (the one that broke is suspect), then the same one if its retry rules allow another try. */
  private resumeTiers(): Tier[] {
    const { plan, at } = this.input;
    const after = plan.slice(at + 1);
    return plan[at].retry.attempts > 1 ? [...after, plan[at]] : after;
  }

  /** One resume attempt, started as any attempt is (src/proxy/attempt-start.ts); `held`: the request holds the tier already. */
  private async run(tier: Tier, how: ResumeMeans, delivered: string, sink: StreamSink, held: boolean): Promise<Run> {
    const { site, state, plan } = this.input;
    const { req } = site;
    const { log } = req;
    const n = log.records.filter((a) => a.tier === tier.name).length + 1;
    let diverged = false;
    const prepare: Prepare =
      how === 'continue'
        ? (t) => continuationCall(t, req, delivered, state.delivered.pieces)
        : (t) => UpstreamCall.prepare(t, req.codec, req.request, req.toolTextFor(t));
    const opening = await openTier(site, tier, { prepare, held, n });
    if (!opening.open) {
      if (opening.why === 'aborted')
        return {
          committed: false,
          error: new AttemptError('client_abort', 'client disconnected', { phase: 'connect', failover: false, retryable: false, blame: null }),
          diverged: () => diverged,
        };
      const message = log.records.at(-1)?.message ?? opening.why;
      return {
        committed: false,
        error: new AttemptError('unsupported', message, { phase: 'connect', failover: false, retryable: false, blame: null }),
        refused: message,
        diverged: () => diverged,
      };
    }
    // The client has its status and the stream's opening: the resume writes on where the first left off.
    const port: CommitPort = { commit: () => sink };
    let started: StreamAttempt | null = null;
    const output = new TranslatedOutput(
      state.resumeRenderer(),
      new ResumeDecoder(readParts, how, delivered, (message) => {
        diverged = true;
        started?.cut(new AttemptError('replay_diverged', message, { phase: 'body', failover: false, retryable: false, blame: null }));
      }),
    );
    const flight = startStream(site, plan.indexOf(tier), tier, opening.call, n, { output, port });
    if (!('attempt' in flight)) {
      log.failed(tier, n, flight, 0);
      return { committed: false, error: flight, diverged: () => diverged };
    }
    const attempt = flight.attempt;
    started = attempt;
    const result = await attempt.committed;
    if (!result.committed) log.failed(tier, n, result.error, attempt.elapsedMs);
    else log.ok(tier, n, result.elapsedMs);
    return { ...result, diverged: () => diverged };
  }

  /** No resume: the client's stream ends with the error event it would have had without resume. */
  private giveUp(end: StreamEnd, sink: StreamSink, message: string, cause?: AttemptError): StreamEnd {
    sink.end(Buffer.from(this.input.state.renderer.error(message)));
    const interruption = cause?.reason === 'client_abort' ? cause : (end.interruption as AttemptError);
    return { ...end, interruption, open: null };
  }
}

/** What ended the stream a resume mends, for the log line and the metric. */
function whyOf(interruption: AttemptError): ResumedStream['why'] {
  if (interruption.reason === 'stall_timeout') return 'stall_learned';
  return interruption.reason === 'idle_timeout' ? 'idle' : 'break';
}

/**
 * The request with the delivered text as the start of the assistant's answer (appended to the
 * client's own prefill, if any), and what is left of its max_tokens.
 */
function continuationCall(tier: Tier, req: RoutingRequest, delivered: string, deliveredPieces: number): UpstreamCall | { unsupported: string } {
  const neutral = req.request.neutral();
  if (isUnsupported(neutral)) return neutral;
  const messages: NeutralMessage[] = [...neutral.messages];
  const last = messages[messages.length - 1];
  const text = { type: 'text' as const, text: delivered };
  if (last?.role === 'assistant') messages[messages.length - 1] = { role: 'assistant', content: [...last.content, text] };
  else messages.push({ role: 'assistant', content: [text] });
  const continued: NeutralRequest = { ...neutral, messages };
  // The answer's length limit holds for the whole answer, not for each part of it.
  if (neutral.maxTokens !== undefined) continued.maxTokens = Math.max(1, neutral.maxTokens - deliveredPieces);
  return UpstreamCall.encoded(tier, req.codec, req.request, continued);
}
