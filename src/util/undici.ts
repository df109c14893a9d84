import type * as Undici from 'undici';
import agent from 'undici/lib/dispatcher/agent.js';
import client from 'undici/lib/dispatcher/client.js';
import dispatcher from 'undici/lib/dispatcher/dispatcher.js';
import envHttpProxyAgent from 'undici/lib/dispatcher/env-http-proxy-agent.js';
import pool from 'undici/lib/dispatcher/pool.js';
import api from 'undici/lib/api/index.js';
import undiciGlobal from 'undici/lib/global.js';
import wrapHandler from 'undici/lib/handler/wrap-handler.js';

/**
 * The parts of undici llm-route uses, imported from its own files: undici's index loads all it
 * has (fetch, WebSocket, caches, mocks, interceptors), ~40 ms and ~9 MB of a `serve` start-up
 * for nothing. Same classes, errors and global dispatcher as `import ... from 'undici'`.
 */
export const Agent = agent as typeof Undici.Agent;
export const Client = client as typeof Undici.Client;
export const Pool = pool as typeof Undici.Pool;
export const EnvHttpProxyAgent = envHttpProxyAgent as typeof Undici.EnvHttpProxyAgent;
/** undici's base class: what a dispatcher of llm-route's own making extends (it gets `.request()` and the rest below). */
export const Dispatcher = dispatcher as typeof Undici.Dispatcher;
/** A handler in undici's classic shape (onConnect, onHeaders… : its `request()` makes one) as one of the current shape; a current one as it is. */
export const asCurrentHandler = (wrapHandler as { wrap(handler: Undici.Dispatcher.DispatchHandler): Undici.Dispatcher.DispatchHandler }).wrap;
export const { getGlobalDispatcher } = undiciGlobal as { getGlobalDispatcher: typeof Undici.getGlobalDispatcher };

// What undici's index does so that a dispatcher has .request(), .stream()...
Object.assign((dispatcher as typeof Undici.Dispatcher).prototype, api);

type RequestOptions = Omit<Undici.Dispatcher.RequestOptions, 'origin' | 'path'> & { dispatcher?: Undici.Dispatcher };

/** undici's `request(url, options)`, for an absolute URL. */
export function request(url: URL, { dispatcher = getGlobalDispatcher(), ...opts }: RequestOptions): Promise<Undici.Dispatcher.ResponseData> {
  return dispatcher.request({ ...opts, origin: url.origin, path: url.search ? `${url.pathname}${url.search}` : url.pathname });
}
