import type { Tier } from '../../config/schema.js';
import { UpstreamCall } from '../../protocols/call.js';
import type { NeutralMessage, NeutralRequest } from '../../protocols/neutral.js';
import { TranslatedOutput } from '../../protocols/translated-output.js';
import { isUnsupported, readParts } from '../../protocols/types.js';
import { redactSecrets } from '../../providers/redact-secrets.js';
import type { AttemptRecord, ResumedStream } from '../../telemetry/events.js';
import { AttemptError, timeoutError } from '../attempt-error.js';
import { recordAttempt, type RoutingDeps, type RoutingRequest } from '../routing.js';
import { type CommitResult, StreamAttempt } from '../stream-attempt.js';
import type { StreamEnd, StreamRelay } from '../stream-relay.js';
import type { CommitPort, StreamSink } from '../stream-sink.js';
import { RecoveryDecoder, type RecoveryMeans } from './recovery-decoder.js';
import type { ResumeState } from './resume-state.js';

export interface RecoveryInput {
  req: RoutingRequest;
  deps: RoutingDeps;
  state: ResumeState;
  /** The request's plan, and where in it the committed tier stands. */
  plan: Tier[];
  at: number;
  deadlineAt: number;
  attempts: AttemptRecord[];
}

type Run = CommitResult & { diverged: () => boolean };

/**
 * Mid-stream recovery (SPEC "Mid-stream recovery (opt-in)"): when the committed stream of a
 * resume route broke inside its text, one more attempt on the recovery tier (the next in the
 * plan, else the same one if its retry rules allow another try) goes on writing to the same
 * client response through the same renderer: by continuation where the tier takes a prefill,
 * else (or when it refuses the prefill with a 400) by a verified replay. Whatever goes wrong
 * ends the stream with the protocol's error event, as a route without resume would.
 */
export class Recovery {
  /** What happened, for the request's log line, usage row and metric; null when nothing was resumed. */
  resumed: ResumedStream | null = null;

  constructor(private readonly input: RecoveryInput) {}

  /** The stream's end: the first attempt's, or the recovery's when the first was left open for one. */
  async finish(first: StreamRelay): Promise<StreamEnd> {
    const end = await first.finished;
    const sink = end.open;
    if (!sink || !end.interruption) return end;
    const { state, plan, at } = this.input;
    const tier = this.recoveryTier();
    if (!tier) return this.giveUp(end, sink, end.interruption.message);
    const delivered = state.delivered.text();
    const resumed: ResumedStream = { from: plan[at].name, to: tier.name, how: tier.prefill ? 'continue' : 'replay', at_chars: delivered.length, result: 'failed' };
    this.resumed = resumed;
    let run = await this.run(tier, resumed.how, delivered, sink);
    // A tier that refuses the prefill (current Claude models do) is asked the plain request instead.
    if (!run.committed && resumed.how === 'continue' && (run.error.status === 400 || run.error.reason === 'unsupported')) {
      resumed.how = 'replay';
      run = await this.run(tier, 'replay', delivered, sink);
    }
    if (!run.committed) {
      resumed.result = run.diverged() ? 'diverged' : 'failed';
      // Upstream words can echo the key; they go to the client here.
      const why = redactSecrets(run.error.message, tier.provider);
      return this.giveUp(end, sink, `${end.interruption.message}; its recovery on tier ${tier.name} failed: ${why}`, run.error);
    }
    const second = await run.relay.finished;
    resumed.result = second.interruption ? (run.diverged() ? 'diverged' : 'failed') : 'ok';
    return {
      interruption: second.interruption,
      usage: second.usage ?? end.usage,
      chunkErrors: end.chunkErrors + second.chunkErrors,
      text: resumed.how === 'continue' ? end.text + second.text : second.text,
      open: null,
    };
  }

  /** The next tier in the plan that can carry the request (the one that broke is suspect), else the same one with a retry left. */
  private recoveryTier(): Tier | null {
    const { plan, at, req } = this.input;
    for (let t = at + 1; t < plan.length; t++) {
      if (!isUnsupported(UpstreamCall.prepare(plan[t], req.codec, req.request))) return plan[t];
    }
    return plan[at].retry.attempts > 1 ? plan[at] : null;
  }

  private async run(tier: Tier, how: RecoveryMeans, delivered: string, sink: StreamSink): Promise<Run> {
    const { req, deps, state, deadlineAt } = this.input;
    const n = this.input.attempts.filter((a) => a.tier === tier.name).length + 1;
    let diverged = false;
    const failed = (error: AttemptError): Run => {
      recordAttempt(req, deps, this.input.attempts, tier, n, error.reason, 0, error.status, null, error.message);
      return { committed: false, error, diverged: () => diverged };
    };
    const remaining = deadlineAt - performance.now();
    if (remaining <= 0) return failed(timeoutError('deadline', req.route.deadline_ms, 'first_token'));
    const call = how === 'continue'
      ? continuationCall(tier, req, delivered, state.delivered.pieces)
      : UpstreamCall.prepare(tier, req.codec, req.request);
    if (isUnsupported(call)) return failed(new AttemptError('unsupported', call.unsupported, { phase: 'connect', failover: false, retryable: false, blame: null }));
    const budget = Math.min(tier.timeouts.ttft_ms, Math.ceil(remaining));
    // The client has its status and the stream's opening: the recovery writes on where the first left off.
    const port: CommitPort = { commit: () => sink };
    const attempt: StreamAttempt = new StreamAttempt({
      tier, call, pool: deps.pools.get(tier.provider), client: req.client,
      ttftBudgetMs: budget,
      ttftLimit: budget < tier.timeouts.ttft_ms ? 'deadline' : 'ttft_timeout',
      output: new TranslatedOutput(state.recoveryRenderer(), new RecoveryDecoder(readParts, how, delivered, (message) => {
        diverged = true;
        attempt.cut(new AttemptError('replay_diverged', message, { phase: 'body', failover: false, retryable: false, blame: null }));
      })),
      port, ordinal: this.input.attempts.length + 1, telemetry: deps.telemetry, route: req.route.name,
    });
    const result = await attempt.committed;
    if (!result.committed) {
      recordAttempt(req, deps, this.input.attempts, tier, n, result.error.reason, attempt.elapsedMs, result.error.status, result.error.blame, result.error.message);
      return { ...result, diverged: () => diverged };
    }
    recordAttempt(req, deps, this.input.attempts, tier, n, 'ok', result.elapsedMs, undefined, null);
    return { ...result, diverged: () => diverged };
  }

  /** No recovery: the client's stream ends with the error event it would have had without resume. */
  private giveUp(end: StreamEnd, sink: StreamSink, message: string, cause?: AttemptError): StreamEnd {
    sink.end(Buffer.from(this.input.state.renderer.error(message)));
    const interruption = cause?.reason === 'client_abort' ? cause : (end.interruption as AttemptError);
    return { ...end, interruption, open: null };
  }
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
