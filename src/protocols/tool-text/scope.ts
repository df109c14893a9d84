import type { Tier } from '../../config/schema.js';
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
 * One request's tools as tool text needs them (name → schema, read once from the client's
 * body, without the rest of its neutral form) and what each attempt made of text calls.
 */
export class ToolTextScope {
  readonly reports: ToolTextReport[] = [];

  constructor(
    readonly tools: ToolSchemas,
    /** Ids in the client's style: Messages' `toolu_…`, OpenAI's and Ollama's `call_…`. */
    readonly idPrefix: string,
  ) {}

  report(report: ToolTextReport): void {
    this.reports.push(report);
  }
}

/** What the request log and the usage row say of a request's tool text: its last attempt's report, without the tier. */
export function toolTextSummary(reports: readonly ToolTextReport[]): Omit<ToolTextReport, 'tier'> {
  const { format, calls, repaired, result } = reports[reports.length - 1];
  return { format, calls, repaired, result };
}

const scopes = new WeakMap<ClientRequest, ToolTextScope | null>();

/**
 * The request's tool-text scope for `tier`, or null when there is nothing to recover: the tier
 * says `tool_text: off`, the request offers no tools, or its tool_choice is "none". `codec`, the
 * client's, reads its tools and its choice.
 */
export function toolTextScope(tier: Tier, request: ClientRequest, codec: ClientCodec): ToolTextScope | null {
  if (tier.tool_text === 'off' || request.operation === 'count_tokens') return null;
  // Most requests offer no tools: answered without an entry in the WeakMap, whose every write
  // the next scavenge pays for (an ephemeron) on each request.
  if (!offersTools(request.body)) return null;
  let scope = scopes.get(request);
  if (scope === undefined) scopes.set(request, (scope = scopeOf(request, codec)));
  return scope;
}

/** The request's scope when one was made (the request's end reads its reports). */
export function reportsOf(request: ClientRequest): readonly ToolTextReport[] {
  return scopes.get(request)?.reports ?? [];
}

/** The scope of a request that offers tools. */
function scopeOf(request: ClientRequest, codec: ClientCodec): ToolTextScope | null {
  if (codec.choosesNoTool(request.body)) return null;
  const list = codec.offeredTools(request.body);
  if (list.length === 0) return null;
  warmSchemaChecks();
  return new ToolTextScope(new Map(list.map((tool) => [tool.name, tool.parameters])), codec.toolCallIdPrefix);
}
