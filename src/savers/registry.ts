import type { Route, SaverSpec } from '../config/schema.js';
import { dedupeSystemSaver } from './dedupe-system.js';
import { minifyToolJsonSaver } from './minify-tool-json.js';
import { trimHistorySaver } from './trim-history.js';
import { truncateToolOutputSaver } from './truncate-tool-output.js';
import type { Saver } from './types.js';
import { whitespaceSaver } from './whitespace.js';

/** The built-in saver a config entry names, with its options. */
export function buildSaver(spec: SaverSpec): Saver {
  switch (spec.name) {
    case 'whitespace':
      return whitespaceSaver(spec.options);
    case 'dedupe_system':
      return dedupeSystemSaver();
    case 'minify_tool_json':
      return minifyToolJsonSaver();
    case 'truncate_tool_output':
      return truncateToolOutputSaver(spec.options);
    case 'trim_history':
      return trimHistorySaver(spec.options);
  }
}

const built = new WeakMap<Route, readonly Saver[]>();

/** A route's savers, built once per loaded route (a reload makes new routes, so new savers). */
export function saversFor(route: Route): readonly Saver[] {
  let savers = built.get(route);
  if (!savers) built.set(route, (savers = route.savers.map(buildSaver)));
  return savers;
}
