import type { Comparison, Config, Route, Rule, RuleWhen } from '../config/schema.js';
import { parseComparison } from '../config/schema.js';
import { compileGlobs } from '../util/glob.js';
import { routeKind } from '../config/find-route.js';
import { requestKind } from '../protocols/core/client-request.js';
import type { RequestFacts } from './request-facts.js';

/** The route the first matching rule names, and that rule. */
export interface RuleMatch {
  route: Route;
  rule: Rule;
}

type Check = (facts: RequestFacts) => boolean;

interface CompiledRule {
  rule: Rule;
  /** Every key of `when` but prompt_tokens: all must hold. */
  checks: Check[];
  /** Asked last, and only when the body's size cannot decide it. */
  promptTokens: Comparison | undefined;
}

/** Per config: its rules compiled on first use (a reload brings a new config). */
const compiledRules = new WeakMap<Config, CompiledRule[]>();

/**
 * docs/rules.md: the first rule whose `when` holds, in file order; undefined when
 * none does (the model name decides, as without rules). Synchronous unless a rule's
 * prompt_tokens could only be decided by counting the prompt.
 */
export function matchRules(config: Config, facts: RequestFacts): RuleMatch | undefined | Promise<RuleMatch | undefined> {
  const rules = compiledFor(config);
  for (let index = 0; index < rules.length; index++) {
    const compiled = rules[index];
    if (!compiled.checks.every((check) => check(facts))) continue;
    if (compiled.promptTokens) {
      const bound = boundVerdict(compiled.promptTokens, facts.bodyBytes);
      if (bound === false) continue;
      if (bound === undefined) return countedMatch(config, rules, index, facts);
    }
    return matched(config, compiled.rule);
  }
  return undefined;
}

/** From a rule that needs the prompt counted on: the count decides it, the rules after it as before. */
async function countedMatch(config: Config, rules: CompiledRule[], from: number, facts: RequestFacts): Promise<RuleMatch | undefined> {
  for (let index = from; index < rules.length; index++) {
    const compiled = rules[index];
    if (!compiled.checks.every((check) => check(facts))) continue;
    const comparison = compiled.promptTokens;
    if (comparison && !(boundVerdict(comparison, facts.bodyBytes) ?? compare(comparison, await facts.promptTokens()))) continue;
    return matched(config, compiled.rule);
  }
  return undefined;
}

function matched(config: Config, rule: Rule): RuleMatch {
  return { route: config.routes.get(rule.route) as Route, rule }; // cross-checks vouch for the route
}

/**
 * A prompt has at most as many tokens as its body has bytes (a token is at least one byte, and
 * the body carries more than the texts counted): a body smaller than the threshold decides the
 * comparison without counting. undefined: only a count can tell.
 */
export function boundVerdict(comparison: Comparison, bodyBytes: number): boolean | undefined {
  if (bodyBytes >= comparison.value) return undefined;
  return comparison.op === '<' || comparison.op === '<=';
}

export function compare(comparison: Comparison, tokens: number): boolean {
  switch (comparison.op) {
    case '>=':
      return tokens >= comparison.value;
    case '<=':
      return tokens <= comparison.value;
    case '>':
      return tokens > comparison.value;
    case '<':
      return tokens < comparison.value;
    case '==':
      return tokens === comparison.value;
  }
}

function compiledFor(config: Config): CompiledRule[] {
  let compiled = compiledRules.get(config);
  if (!compiled) {
    compiled = (config.rules ?? []).map((rule) => compileRule(rule, config));
    compiledRules.set(config, compiled);
  }
  return compiled;
}

function compileRule(rule: Rule, config: Config): CompiledRule {
  const when: RuleWhen = rule.when;
  // A rule chooses among routes of the request's kind: a chat rule never takes an embeddings request, nor the reverse.
  const kind = routeKind(config.routes.get(rule.route) ?? { embedding: undefined });
  const checks: Check[] = [(facts) => requestKind(facts.request) === kind];
  if (when.model !== undefined) {
    const matches = compileGlobs([when.model]);
    checks.push((facts) => matches(facts.model));
  }
  if (when.protocol !== undefined) checks.push((facts) => facts.request.protocol === when.protocol);
  if (when.client !== undefined) checks.push((facts) => facts.client === when.client);
  if (when.class !== undefined) checks.push((facts) => facts.class === when.class);
  if (when.thinking !== undefined) checks.push((facts) => facts.thinking === when.thinking);
  if (when.images !== undefined) checks.push((facts) => facts.images === when.images);
  if (when.tools !== undefined) checks.push((facts) => facts.tools === when.tools);
  for (const [name, value] of Object.entries(when.header ?? {})) {
    const key = name.toLowerCase();
    checks.push((facts) => {
      const sent = facts.headers[key];
      return Array.isArray(sent) ? sent.includes(value) : sent === value;
    });
  }
  return { rule, checks, promptTokens: when.prompt_tokens === undefined ? undefined : parseComparison(when.prompt_tokens) };
}
