import { readFileSync } from 'node:fs';
import { ConfigError } from '../config/errors.js';
import { loadConfig, resolveConfigPath } from '../config/load.js';
import type { Config, Route } from '../config/schema.js';
import { closestMatch } from '../config/suggest.js';
import { detectProtocol } from '../savers/detect-protocol.js';
import { formatChanges } from '../savers/diff.js';
import { applySavers, SAVER_BUDGET_MS, type SaversResult } from '../savers/pipeline.js';
import { saversFor } from '../savers/registry.js';
import { contentTokens } from '../savers/view.js';
import { tokenCounter } from '../tokens/count.js';

export interface SaversTryOptions {
  config?: string;
  route?: string;
  json?: boolean;
}

class UsageProblem extends Error {}

/**
 * `llm-route savers try FILE.json`: runs a route's savers on a request body as the proxy would,
 * and shows each saver's effect (a short diff) and the tokens before and after it. Exit 2 for a
 * file that is not a request body, a bad tier file, or an unknown route.
 */
export async function runSaversTry(file: string, opts: SaversTryOptions): Promise<number> {
  try {
    const body = readBody(file);
    const protocol = detectProtocol(body);
    if (!protocol) {
      throw new UsageProblem(`${file} is not a request body: expected "messages" (Chat Completions, Anthropic Messages) or "input" (OpenAI Responses)`);
    }
    const config = loadConfig(resolveConfigPath(opts.config));
    const route = pickRoute(config, opts.route, body.model);
    const counter = await tokenCounter(route.tiers[0].tokenizer);
    // No time budget here: a cold process is slower than the proxy, and a diagnostic should show
    // what each saver does. Its own time is shown instead, flagged when over the proxy's budget.
    const result = applySavers(protocol, body, saversFor(route), counter, { trace: true, budgetMs: Infinity });
    const before = contentTokens(protocol, body, counter.count);
    const after = result.measures.at(-1)?.after ?? before;
    const report = {
      route: route.name,
      before,
      after,
      savers: result.measures.map((m, i) => ({ saver: m.saver, before: m.before, after: m.after, diff: diffOf(result, i) })),
    };
    if (opts.json) process.stdout.write(`${JSON.stringify(report)}\n`);
    else process.stdout.write(renderReport(report, protocol, counter.encoding, result.ownMs ?? []));
    return 0;
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.format()}\n`);
      return 2;
    }
    if (error instanceof UsageProblem) {
      process.stderr.write(`llm-route savers try: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}

function readBody(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageProblem(`cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch (error) {
    throw new UsageProblem(`${file} is not a request body: it is not JSON (${(error as Error).message})`);
  }
}

function pickRoute(config: Config, asked: string | undefined, model: unknown): Route {
  const names = [...config.routes.keys()];
  if (asked !== undefined) {
    const route = config.routes.get(asked);
    if (route) return route;
    const suggestion = closestMatch(asked, names);
    throw new UsageProblem(`unknown route "${asked}"; ${suggestion ? `did you mean "${suggestion}"?` : `routes: ${names.join(', ')}`}`);
  }
  if (typeof model === 'string' && config.routes.has(model)) return config.routes.get(model) as Route;
  const named = typeof model === 'string' ? `the body's "model" ("${model}") names no route` : 'the body has no "model"';
  throw new UsageProblem(`unknown route: ${named}; pass --route (routes: ${names.join(', ')})`);
}

function diffOf(result: SaversResult, index: number): string {
  const measure = result.measures[index];
  if (measure.failed) {
    const failure = result.failures.find((f) => f.saver === measure.saver);
    return `skipped: ${failure?.reason ?? 'failed'}: ${failure?.message ?? ''}`;
  }
  return formatChanges(result.changes?.[index] ?? []);
}

interface Report {
  route: string;
  before: number;
  after: number;
  savers: Array<{ saver: string; before: number; after: number; diff: string }>;
}

function renderReport(report: Report, protocol: string, encoding: string, ownMs: number[]): string {
  const lines = [`route ${report.route} (${protocol} body, ${encoding}): ${report.before} → ${report.after} tokens (${saving(report.before, report.after)})`];
  if (report.savers.length === 0) lines.push('  no savers on this route');
  const width = Math.max(...report.savers.map((s) => s.saver.length), 0);
  report.savers.forEach((s, i) => {
    const ms = ownMs[i] ?? 0;
    const slow = ms > SAVER_BUDGET_MS ? ` — over the ${SAVER_BUDGET_MS} ms budget: the proxy would skip it` : '';
    lines.push('', `${s.saver.padEnd(width)}  ${s.before} → ${s.after} (${saving(s.before, s.after)}) ${ms.toFixed(1)} ms${slow}`);
    if (s.diff) lines.push(...s.diff.split('\n').map((line) => `  ${line}`));
    else lines.push('  (nothing to change)');
  });
  return `${lines.join('\n')}\n`;
}

function saving(before: number, after: number): string {
  const saved = before - after;
  if (saved === 0) return 'saved 0';
  return `saved ${saved}, ${((saved / before) * 100).toFixed(1)}%`;
}
