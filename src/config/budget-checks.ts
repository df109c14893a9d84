import type { ConfigProblem } from './errors.js';
import type { Reporter } from './positions.js';
import { isRecord } from './raw-data.js';
import { closestMatch } from './suggest.js';

const SCOPE = /^(provider|route):(.+)$/;

/**
 * What the schema cannot say about `budgets:`: a scope names an existing provider or route,
 * each budget has exactly one of `usd` / `tokens`, and no two budgets count the same thing.
 * Reads the raw data defensively, like the other cross-checks.
 */
export function budgetProblems(data: Record<string, unknown>, report: Reporter): ConfigProblem[] {
  if (!Array.isArray(data.budgets)) return [];
  const names = {
    provider: isRecord(data.providers) ? Object.keys(data.providers) : [],
    route: isRecord(data.routes) ? Object.keys(data.routes) : [],
  };
  const problems: ConfigProblem[] = [];
  const seen = new Map<string, number>();
  data.budgets.forEach((budget: unknown, index: number) => {
    if (!isRecord(budget)) return;
    const path = ['budgets', index];
    if (typeof budget.scope === 'string') {
      const problem = scopeProblem(budget.scope, names);
      if (problem) problems.push(report.at('value', [...path, 'scope'], problem));
    }
    const units = ['usd', 'tokens'].filter((unit) => budget[unit] !== undefined);
    if (units.length !== 1) {
      const message =
        units.length === 0
          ? 'a budget needs a limit: `usd: N` or `tokens: N`'
          : 'a budget has one limit: `usd` or `tokens`, not both (write two budgets for both)';
      problems.push(report.at(units.length === 0 ? 'value' : 'key', units.length === 0 ? path : [...path, 'tokens'], message));
      return;
    }
    const key = `${String(budget.scope)}\u0000${String(budget.per)}\u0000${units[0]}`;
    const first = seen.get(key);
    if (first === undefined) seen.set(key, index);
    else
      problems.push(
        report.at('value', path, `budgets[${first}] already limits ${String(budget.scope)} in ${units[0]} per ${String(budget.per)}; keep one of them`),
      );
  });
  return problems;
}

function scopeProblem(scope: string, names: { provider: string[]; route: string[] }): string | null {
  const match = SCOPE.exec(scope);
  if (!match) {
    const kind = closestMatch(scope.split(':')[0] ?? '', ['provider', 'route']);
    const hint = kind ? `; did you mean "${kind}:${scope.split(':').slice(1).join(':') || 'NAME'}"?` : '';
    return `invalid budget scope "${scope}": expected provider:NAME or route:NAME${hint}`;
  }
  const kind = match[1] as 'provider' | 'route';
  const name = match[2];
  const known = names[kind];
  if (known.includes(name)) return null;
  const suggestion = closestMatch(name, known);
  if (suggestion) return `unknown ${kind} "${name}" in budget scope; did you mean "${kind}:${suggestion}"?`;
  return known.length === 0
    ? `unknown ${kind} "${name}" in budget scope; no ${kind}s are defined`
    : `unknown ${kind} "${name}" in budget scope; defined ${kind}s: ${known.join(', ')}`;
}
