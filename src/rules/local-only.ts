import type { IncomingHttpHeaders } from 'node:http';
import { isLocalBaseUrl } from '../config/rule-checks.js';
import type { Provider, Route, Tier } from '../config/schema.js';

/** The request header that makes one request local-only (it can only tighten: no value loosens a route). */
export const LOCAL_ONLY_HEADER = 'x-llm-route-local-only';

/** Per provider: whether its base URL's host, as written, is on the local network. */
const localProviders = new WeakMap<Provider, boolean>();
/** Per route: the route with its non-local tiers taken out. */
const localRoutes = new WeakMap<Route, Route>();
/** Per such local-only route: how many tiers it lost. */
const excludedCounts = new WeakMap<Route, number>();

export function isLocalTier(tier: Tier): boolean {
  let local = localProviders.get(tier.provider);
  if (local === undefined) {
    local = isLocalBaseUrl(tier.provider.base_url);
    localProviders.set(tier.provider, local);
  }
  return local;
}

/** The route is local-only for this request: by its own `local_only`, or by the request's header. */
export function wantsLocalOnly(route: Route, headers: IncomingHttpHeaders): boolean {
  return route.local_only === true || headers[LOCAL_ONLY_HEADER] === '1';
}

/**
 * docs/rules.md: the route as the routing loop gets it, only tiers on the local network
 * (loopback, RFC 1918, link-local, IPv6 ULA and link-local, `.local`, single-label names), so
 * nothing of the request can reach another. The same tier objects: health and limits are shared.
 */
export function localOnly(route: Route): Route {
  let local = localRoutes.get(route);
  if (!local) {
    local = { ...route, tiers: route.tiers.filter(isLocalTier) };
    localRoutes.set(route, local);
    excludedCounts.set(local, route.tiers.length - local.tiers.length);
  }
  return local;
}

/** The tiers a local-only request never reaches, for `explain`. */
export function excludedTiers(route: Route): Tier[] {
  return route.tiers.filter((tier) => !isLocalTier(tier));
}

/** How many tiers local-only took out of this route as the routing loop got it (0: none, or not local-only). */
export function tiersExcluded(route: Route): number {
  return excludedCounts.get(route) ?? 0;
}
