import { compileGlobs, type GlobMatcher, matchesGlob } from '../util/glob.js';
import type { Config, Route, RouteKind } from './schema.js';

/** Per config: each route with an alias matcher, in file order, compiled on first use. */
const aliasTables = new WeakMap<Config, Array<{ route: Route; matches: GlobMatcher }>>();

/** What a route answers: chat and generation, or embeddings (docs/embeddings.md). */
export function routeKind(route: Pick<Route, 'embedding'>): RouteKind {
  return route.embedding ? 'embeddings' : 'chat';
}

/** findRoute, else the config's `default_route` (a missing `model` is ''), when it answers `kind`. */
export function findRouteOrDefault(config: Config, model: string, kind: RouteKind = 'chat'): Route | undefined {
  const found = model === '' ? undefined : findRoute(config, model, kind);
  if (found) return found;
  const fallback = config.default_route ? config.routes.get(config.default_route) : undefined;
  return fallback && routeKind(fallback) === kind ? fallback : undefined;
}

/**
 * The route a client's `model` names: a route's exact name first (of either kind: a request of
 * the other kind is told so), then the first route of the request's `kind` (in file order) with
 * an alias glob that matches it. Claude Code and Codex send model names of their own
 * (`claude-sonnet-…`, `gpt-…`); aliases catch them, and a chat route's `*` catches no embeddings.
 */
export function findRoute(config: Config, model: string, kind: RouteKind = 'chat'): Route | undefined {
  const exact = config.routes.get(model);
  if (exact) return exact;
  let table = aliasTables.get(config);
  if (!table) {
    table = [...config.routes.values()].filter((route) => route.aliases.length > 0).map((route) => ({ route, matches: compileGlobs(route.aliases) }));
    aliasTables.set(config, table);
  }
  return table.find((entry) => routeKind(entry.route) === kind && entry.matches(model))?.route ?? classModelRoute(config, model);
}

/** Request classes a model name can carry after the route's name (`chat@background`). */
export type ModelClass = 'background' | 'subagent';

/**
 * The class in a model name `exec` gives a client per request class: `<route>@background`,
 * `<route>@subagent` (rules match the class; without a rule that does, it is the route).
 */
export function modelClass(model: string): ModelClass | undefined {
  if (model.endsWith('@background')) return 'background';
  if (model.endsWith('@subagent')) return 'subagent';
  return undefined;
}

/** `<route>@<class>` names that route when nothing else claims the whole name. */
function classModelRoute(config: Config, model: string): Route | undefined {
  const cls = modelClass(model);
  return cls ? config.routes.get(model.slice(0, -cls.length - 1)) : undefined;
}

/**
 * Whether `model` reached `route` (what findRoute gave) only through a catch-all alias `*`:
 * no route has that name and no other alias of the route matches it. That is how a typo
 * (`caht`) gets a 200 from a route that takes every name, so the log says it.
 */
export function reachedOnlyByCatchAll(config: Config, model: string, route: Route): boolean {
  if (config.routes.has(model) || !route.aliases.includes('*')) return false;
  // `<route>@background` from exec names its route on purpose, whoever's `*` caught it.
  if (classModelRoute(config, model)?.name === route.name) return false;
  return !route.aliases.some((alias) => alias !== '*' && matchesGlob(alias, model));
}
