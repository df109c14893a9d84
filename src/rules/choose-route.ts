import type { IncomingHttpHeaders } from 'node:http';
import { findRouteOrDefault } from '../config/find-route.js';
import type { Config, Route, Rule } from '../config/schema.js';
import type { ClientRequest } from '../protocols/types.js';
import { localOnly, wantsLocalOnly } from './local-only.js';
import { matchRules } from './match-rules.js';
import { RequestFacts } from './request-facts.js';

/** Where a request goes: its route (only its local tiers when local-only) and the rule that chose it, if one did. */
export interface RouteChoice {
  route: Route;
  rule: Rule | null;
  /** Local-only: the route as configured, before its non-local tiers were taken out. */
  unfiltered: Route | null;
}

/**
 * SPEC "Routing by purpose": the first matching rule's route, else the route the model names
 * (or default_route); undefined when neither gives one (404). Without rules this is the model
 * lookup alone; a local-only route or request then loses every tier off the local network.
 */
export async function chooseRoute(config: Config, request: ClientRequest, headers: IncomingHttpHeaders, bodyBytes: number): Promise<RouteChoice | undefined> {
  let rule: Rule | null = null;
  let route: Route | undefined;
  if (config.rules !== undefined && config.rules.length > 0) {
    const match = await matchRules(config, new RequestFacts(request, headers, bodyBytes));
    if (match) ({ route, rule } = match);
  }
  route ??= findRouteOrDefault(config, request.model);
  if (!route) return undefined;
  if (!wantsLocalOnly(route, headers)) return { route, rule, unfiltered: null };
  return { route: localOnly(route), rule, unfiltered: route };
}
