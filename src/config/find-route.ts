import type { Config, Route } from './schema.js';

/** The route a client's `model` names: by exact name. */
export function findRoute(config: Config, model: string): Route | undefined {
  return config.routes.get(model);
}
