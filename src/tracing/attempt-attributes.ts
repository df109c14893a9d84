import type { Attributes } from '@opentelemetry/api';
import type { Usage } from '../protocols/core/usage.js';
import type { ToolTextReport } from '../protocols/tool-text/scope.js';
import type { AttemptFinished, AttemptRecord, RequestFinished } from '../telemetry/events.js';
import type { ProviderFacts } from './provider-facts.js';

/** What one attempt was to its request, read from the request's end. */
export interface AttemptRole {
  /** The client got this attempt's answer: the request's usage and finish are its. */
  answered: boolean;
  /** A resume of the committed stream that broke (a resume route). */
  resumed: boolean;
  /** One of two attempts that raced for the first token (a hedge_ms route). */
  hedge?: 'won' | 'lost';
  /** What it made of a tool call the model wrote as text. */
  toolText?: ToolTextReport;
}

/**
 * Each attempt's role. The answer is the last `ok` (a resume's, when one took over); resumes are
 * the attempts that started after the first commit (a hedge's loser started before it); a tool
 * text report (one per attempt that held one, with its tier) goes to its tier's latest attempt
 * that ended as the report says: `failed_over` as `bad_tool_call`, the others as `ok`.
 */
export function attemptRoles(end: RequestFinished, events: readonly (AttemptFinished | undefined)[]): AttemptRole[] {
  const records = end.attempts;
  const roles: AttemptRole[] = records.map(() => ({ answered: false, resumed: false }));
  if (end.tier !== null) {
    const answered = records.findLastIndex((record) => record.outcome === 'ok');
    if (answered !== -1) roles[answered].answered = true;
  }
  const firstOk = records.findIndex((record) => record.outcome === 'ok');
  if (end.resumed && firstOk !== -1) {
    const commitMs = events[firstOk]?.endMs;
    for (let i = firstOk + 1; i < records.length; i++) {
      const startMs = events[i]?.startMs;
      if (records[i].outcome !== 'hedge_lost' && (commitMs === undefined || startMs === undefined || startMs >= commitMs)) roles[i].resumed = true;
    }
  }
  if (end.hedged) {
    const { winner, loser } = end.hedged;
    if (firstOk !== -1 && records[firstOk].tier === winner) roles[firstOk].hedge = 'won';
    for (let i = 0; i < records.length; i++) if (records[i].outcome === 'hedge_lost' && records[i].tier === loser) roles[i].hedge = 'lost';
  }
  const reports = end.toolText ?? [];
  for (let r = reports.length - 1; r >= 0; r--) {
    const report = reports[r];
    const outcome = report.result === 'failed_over' ? 'bad_tool_call' : 'ok';
    const i = records.findLastIndex((record, at) => !roles[at].toolText && record.tier === report.tier && record.outcome === outcome);
    if (i !== -1) roles[i].toolText = report;
  }
  return roles;
}

/**
 * A CLIENT span's attributes: the GenAI semantic conventions (`gen_ai.*`, `server.*`,
 * `error.type`: the attempt's outcome when it was not `ok`) and llm-route's own (`llm_route.*`).
 * No prompt or answer text, and no upstream message: those may quote either.
 */
export function attemptAttributes(
  end: RequestFinished,
  record: AttemptRecord,
  event: AttemptFinished | undefined,
  role: AttemptRole,
  provider: ProviderFacts | undefined,
): Attributes {
  const attributes: Attributes = {
    'gen_ai.operation.name': operationName(end),
    'gen_ai.request.stream': end.stream,
    'llm_route.tier': record.tier,
    'llm_route.attempt': record.attempt,
  };
  if (event) attributes['gen_ai.request.model'] = event.model;
  if (provider) {
    attributes['gen_ai.provider.name'] = provider.genAi;
    attributes['server.address'] = provider.address;
    attributes['server.port'] = provider.port;
  }
  if (end.maxTokens !== undefined) attributes['gen_ai.request.max_tokens'] = end.maxTokens;
  if (record.status !== undefined) attributes['http.response.status_code'] = record.status;
  if (record.outcome !== 'ok') attributes['error.type'] = record.outcome;
  if (role.answered) {
    if (end.usage) addUsage(attributes, end.usage);
    if (end.embeddings?.width !== undefined) attributes['gen_ai.embeddings.dimension.count'] = end.embeddings.width;
    const whole = end.answerFacts?.();
    const finish = end.finishReason ?? whole?.finish;
    const model = end.responseModel ?? whole?.model;
    if (finish) attributes['gen_ai.response.finish_reasons'] = [finish];
    if (model) attributes['gen_ai.response.model'] = model;
  }
  if (role.hedge) {
    attributes['llm_route.hedged'] = true;
    attributes['llm_route.hedge.result'] = role.hedge;
    if (role.hedge === 'lost' && end.loserUsage?.tier === record.tier) addUsage(attributes, end.loserUsage.usage);
  }
  if (role.resumed && end.resumed) {
    attributes['llm_route.resumed'] = true;
    attributes['llm_route.resume.how'] = end.resumed.how;
    attributes['llm_route.resume.result'] = end.resumed.result;
    attributes['llm_route.resume.why'] = end.resumed.why;
  }
  if (role.toolText) {
    attributes['llm_route.tool_text.format'] = role.toolText.format;
    attributes['llm_route.tool_text.result'] = role.toolText.result;
    attributes['llm_route.tool_text.calls'] = role.toolText.calls;
    attributes['llm_route.tool_text.repaired'] = role.toolText.repaired;
  }
  return attributes;
}

/** The GenAI operation a request's attempts are: `embeddings` for an embeddings request, else `chat` (the span's name starts with it). */
export function operationName(end: RequestFinished): 'chat' | 'embeddings' {
  return end.embeddings ? 'embeddings' : 'chat';
}

/** The upstream's token counts: input includes the tokens read from (and written to) a prompt cache. */
function addUsage(attributes: Attributes, usage: Usage): void {
  attributes['gen_ai.usage.input_tokens'] = usage.prompt_tokens;
  attributes['gen_ai.usage.output_tokens'] = usage.completion_tokens;
  if (usage.cached_tokens !== undefined) attributes['gen_ai.usage.cache_read.input_tokens'] = usage.cached_tokens;
  if (usage.cache_creation_tokens !== undefined) attributes['gen_ai.usage.cache_creation.input_tokens'] = usage.cache_creation_tokens;
}
