import type { ClientCodec } from '../core/client-codec.js';
import { offersTools } from '../core/client-request.js';
import type { ClientRequest } from '../core/types.js';
import type { ToolTextFormat } from './forms.js';
import type { ToolSchemas } from './recover.js';
import { warmSchemaChecks } from './schema-check.js';

/** How one attempt's tool call written as text ended (SPEC: the log line's `tool_text`, the metric's labels). */
export interface ToolTextReport {
  tier: string;
  format: ToolTextFormat;
  calls: number;
  repaired: boolean;
  result: 'recovered' | 'repaired' | 'failed_over' | 'passed_as_text';
}

/**
 * The tier an attempt reads tool text for: its name, and whether it is the last this request
 * will try (the plan after weights, health, fit and rules), where a call the client cannot run
 * goes out as written since no tier is left to ask (undefined: not known yet). Asked only when a
 * call turns out unusable.
 */
export interface TierPlace {
  readonly name: string;
  isLast(): boolean | undefined;
}

/**
 * One request's tools as tool text needs them (name → schema, read once from the client's
 * body, without the rest of its neutral form) and what each attempt made of text calls.
 */
export class ToolTextScope {
  readonly reports: ToolTextReport[] = [];

  /** `readsLater`: forms after committed text are read too (not on a Chat stream asked for n > 1 answers: only the first would be drawn). */
  constructor(
    readonly tools: ToolSchemas,
    /** Ids in the client's style: Messages' `toolu_…`, OpenAI's and Ollama's `call_…`. */
    readonly idPrefix: string,
    readonly readsLater = true,
  ) {}

  report(report: ToolTextReport): void {
    this.reports.push(report);
  }
}

/**
 * One attempt's tool text, as its report says it: made at the attempt's first form, then
 * counting every call delivered (two `<tool_call>` blocks: 2); `repaired` once any call needed
 * a repair; `passed_as_text` only while no call was delivered.
 */
export class AttemptToolText {
  private report: ToolTextReport | null = null;

  constructor(
    private readonly scope: ToolTextScope,
    private readonly tier: string,
  ) {}

  /** Calls delivered so far. */
  get calls(): number {
    return this.report?.calls ?? 0;
  }

  note(result: ToolTextReport['result'], calls: number, repaired: boolean, format: ToolTextFormat): void {
    const report = this.report;
    if (report === null) {
      this.report = { tier: this.tier, format, calls, repaired, result };
      this.scope.report(this.report);
      return;
    }
    report.calls += calls;
    report.repaired ||= repaired;
    if (result === 'failed_over') report.result = result;
    else if (report.calls > 0) report.result = report.repaired ? 'repaired' : 'recovered';
  }
}

/** What the request log and the usage row say of a request's tool text: its last attempt's report, without the tier. */
export function toolTextSummary(reports: readonly ToolTextReport[]): Omit<ToolTextReport, 'tier'> {
  const { format, calls, repaired, result } = reports[reports.length - 1];
  return { format, calls, repaired, result };
}

/**
 * The request's tool-text scope, made once per request (its routing keeps it, and each tier's
 * call reads through it unless the tier says `tool_text: off`), or null when there is nothing
 * to recover: the request offers no tools, or its tool_choice is "none". `codec`, the
 * client's, reads its tools and its choice.
 */
export function toolTextScope(request: ClientRequest, codec: ClientCodec): ToolTextScope | null {
  // Most requests offer no tools: answered from the body's one key, nothing made.
  if (request.operation === 'count_tokens' || !offersTools(request.body)) return null;
  if (codec.choosesNoTool(request.body)) return null;
  const list = codec.offeredTools(request.body);
  if (list.length === 0) return null;
  warmSchemaChecks();
  // A Chat stream asked for n > 1 answers draws only the first: forms after its text are not read there.
  const n = request.body.n;
  return new ToolTextScope(new Map(list.map((tool) => [tool.name, tool.parameters])), codec.toolCallIdPrefix, typeof n !== 'number' || n <= 1);
}
