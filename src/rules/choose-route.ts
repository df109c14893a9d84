import type { IncomingHttpHeaders } from 'node:http';
import { findRouteOrDefault } from '../config/find-route.js';
import type { Config, Route, Rule } from '../config/schema.js';
import type { ClientRequest } from '../protocols/core/types.js';
import { requestKind } from '../protocols/core/client-request.js';
import { localOnly, wantsLocalOnly } from './local-only.js';
import { matchRules, type RuleMatch } from './match-rules.js';
import { RequestFacts } from './request-facts.js';

/** Where a request goes: its route (only its local tiers when local-only) and the rule that chose it, if one did. */
export interface RouteChoice {
  route: Route;
  rule: Rule | null;
  /** Local-only: the route as configured, before its non-local tiers were taken out. */
  unfiltered: Route | null;
}

/**
 * docs/rules.md: the first matching rule's route, else the route the model names
 * (or default_route); undefined when neither gives one (404). Without rules this is the model
 * lookup alone; a local-only route or request then loses every tier off the local network.
 */
export function chooseRoute(
  config: Config,
  request: ClientRequest,
  headers: IncomingHttpHeaders,
  bodyBytes: number,
): RouteChoice | undefined | Promise<RouteChoice | undefined> {
  // No rules: the model lookup alone, synchronously (nothing added to a request's path).
  if (config.rules === undefined || config.rules.length === 0) return choice(findRouteOrDefault(config, request.model, requestKind(request)), null, headers);
  const matched = matchRules(config, new RequestFacts(request, headers, bodyBytes));
  if (matched instanceof Promise) return matched.then((match) => byMatch(config, request, headers, match));
  return byMatch(config, request, headers, matched);
}

function byMatch(config: Config, request: ClientRequest, headers: IncomingHttpHeaders, match: RuleMatch | undefined): RouteChoice | undefined {
  return match ? choice(match.route, match.rule, headers) : choice(findRouteOrDefault(config, request.model, requestKind(request)), null, headers);
}

/** A local-only route or request loses every tier off the local network. */
function choice(route: Route | undefined, rule: Rule | null, headers: IncomingHttpHeaders): RouteChoice | undefined {
  if (!route) return undefined;
  if (!wantsLocalOnly(route, headers)) return { route, rule, unfiltered: null };
  return { route: localOnly(route), rule, unfiltered: route };
}
