import type { ErrorSample, TierResult } from './aggregate.js';
import type { HistogramBucket, Spread } from './stats.js';

/** `--json`: one document on stdout. */
export function renderJson(results: readonly TierResult[]): string {
  return `${JSON.stringify({ tiers: results }, null, 2)}\n`;
}

/** Human output: a block per tier with its percentile table, TTFT histogram and errors. */
export function renderHuman(results: readonly TierResult[]): string {
  return results.map(renderTier).join('\n');
}

/** `chat/local`, or just `chat` through a proxy (which picks the tier). */
export function targetLabel(result: Pick<TierResult, 'route' | 'tier'>): string {
  return result.tier === null ? result.route : `${result.route}/${result.tier}`;
}

function renderTier(result: TierResult): string {
  const lines = [heading(result)];
  if (result.errors < result.requests) {
    lines.push(
      `  ${pad('', 8)}${COLUMNS.map((column) => padStart(column, CELL)).join('')}`,
      `  ${pad('TTFT', 8)}${cells(result.ttft_ms)} ms`,
      `  ${pad('total', 8)}${cells(result.total_ms)} ms`,
      `  ${pad('tok/s', 8)}${tokensLine(result)}`,
      `  ${pad('prompt', 8)}${promptLine(result)}`,
      '',
      '  TTFT histogram',
      ...histogramLines(result.histogram),
    );
  }
  if (result.stale_socket_retries > 0) {
    const n = result.stale_socket_retries;
    lines.push(
      '',
      `  ${n} request${n === 1 ? ' was' : 's were'} sent again on a new connection: the server had closed the pooled keep-alive socket (not errors)`,
    );
  }
  if (result.error_samples.length > 0) lines.push('', '  errors', ...result.error_samples.map(errorLine));
  return `${lines.join('\n')}\n`;
}

function heading(result: TierResult): string {
  const errors = result.errors === result.requests ? `all ${result.requests} failed` : `${result.errors} error${result.errors === 1 ? '' : 's'}`;
  const counts = `${result.requests} request${result.requests === 1 ? '' : 's'}, ${errors}`;
  if (result.tier === null) {
    const servedBy = Object.entries(result.served_by ?? {})
      .map(([tier, count]) => `${tier} ×${count}`)
      .join(', ');
    return `${targetLabel(result)}  (through the proxy${servedBy ? `; answered by ${servedBy}` : ''})  ${counts}`;
  }
  return `${targetLabel(result)}  (${result.provider} · ${result.model})  ${counts}`;
}

const COLUMNS = ['p50', 'p95', 'p99', 'min', 'max'] as const;
const CELL = 10;

function cells(spread: Spread): string {
  return COLUMNS.map((column) => padStart(formatMs(spread[column]), CELL)).join('');
}

function tokensLine(result: TierResult): string {
  if (result.tokens_per_s === null) return '—';
  const source = result.token_source === 'usage' ? 'from usage' : result.token_source === 'counted' ? 'counted content events' : 'usage and counted';
  return `${result.tokens_per_s.toFixed(1)} mean (output tokens ÷ total time; ${result.output_tokens} tokens per answer, ${source})`;
}

function promptLine(result: TierResult): string {
  const kind = result.prompt === 'same' ? 'the same every time (--same-prompt: prompt cache path)' : 'unique per request (nonce first: no prompt-cache hit)';
  if (result.prompt_tokens === null) return kind;
  const cached = result.cached_tokens === null ? 'cached tokens not reported' : `${result.cached_tokens} cached`;
  return `${kind}; ${result.prompt_tokens} tokens per request, ${cached}`;
}

const BAR_WIDTH = 30;
// Eighths of a block, so short bars still differ by less than a whole character.
const PARTIAL_BLOCKS = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];

function histogramLines(buckets: readonly HistogramBucket[]): string[] {
  const most = Math.max(1, ...buckets.map((bucket) => bucket.count));
  const ranges = buckets.map((bucket) => `${formatMs(bucket.from_ms)} – ${formatMs(bucket.to_ms)} ms`);
  const rangeWidth = Math.max(...ranges.map((range) => range.length));
  return buckets.map((bucket, i) => `    ${padStart(ranges[i], rangeWidth)}  ${pad(bar(bucket.count / most), BAR_WIDTH)} ${bucket.count}`);
}

function bar(fraction: number): string {
  const eighths = Math.round(fraction * BAR_WIDTH * 8);
  return '█'.repeat(Math.floor(eighths / 8)) + PARTIAL_BLOCKS[eighths % 8];
}

function errorLine(sample: ErrorSample): string {
  return `    ${sample.count}× ${sample.reason}: ${sample.message}`;
}

function formatMs(value: number | null): string {
  return value === null ? '—' : value.toFixed(1);
}

function pad(text: string, width: number): string {
  return text.padEnd(width);
}

function padStart(text: string, width: number): string {
  return text.padStart(width);
}
