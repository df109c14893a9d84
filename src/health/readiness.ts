import type { Dispatcher } from 'undici';
import { request } from '../util/undici.js';
import type { Provider } from '../config/schema.js';
import { classifyStatus } from '../protocols/errors/classify-status.js';
import { errnoCode } from '../util/network-error.js';
import { profileOf } from '../protocols/profiles.js';
import { checkHeaders } from './provider-http.js';

/**
 * Can the server behind a provider serve requests now? Not "does a port answer": llama-server
 * opens its port at once and answers 503 `Loading model` on every endpoint until its model is
 * loaded. Asked in the order the servers users run answer it:
 *   llama.cpp and vLLM: `GET /health` 200 (503 while llama.cpp loads);
 *   Ollama: `GET /api/version` 200;
 *   anything else: the model list, `GET {base_url}/models`, 200.
 * A 503 from any of them is "still loading"; a 401/403 from the model list is a server that
 * serves (its key is the probe's business, and waiting would not change it).
 */
export type Readiness =
  | { state: 'ready'; via: string }
  /** 503: the server is there and loading (the model, usually); `detail` is its own message. */
  | { state: 'loading'; detail: string }
  /** It answers HTTP, but no ready answer (a 500 from the model list, say). */
  | { state: 'not_ready'; detail: string }
  /** No HTTP answer: nothing listens, or it did not answer in time. */
  | { state: 'down'; detail: string };

export interface ReadinessOptions {
  /** Bound on each GET (default 1 s). */
  timeoutMs?: number;
  dispatcher?: Dispatcher;
}

type ReadinessTarget = Pick<Provider, 'type' | 'base_url' | 'api_key' | 'headers'>;

export async function checkReadiness(provider: ReadinessTarget, opts: ReadinessOptions = {}): Promise<Readiness> {
  const get = (url: URL) => getStatus(url, provider, opts);
  const plan = profileOf(provider).readiness(provider);
  try {
    for (const probe of plan.probes) {
      const answer = await get(probe.url);
      if (answer.status === 200) return { state: 'ready', via: `GET ${probe.url.pathname} 200` };
      if (answer.status === 503 && probe.loadingOn503) return { state: 'loading', detail: answer.message };
    }
    const list = plan.list;
    const models = await get(list);
    if (models.status >= 200 && models.status < 300) return { state: 'ready', via: `GET ${list.pathname} ${models.status}` };
    if (models.status === 503) return { state: 'loading', detail: models.message };
    if (models.status === 401 || models.status === 403) return { state: 'ready', via: `GET ${list.pathname} ${models.status} (serving; the key is refused)` };
    return { state: 'not_ready', detail: `GET ${list.pathname} answered HTTP ${models.status}: ${models.message}` };
  } catch (error) {
    return { state: 'down', detail: error instanceof Error ? failureText(error) : String(error) };
  }
}

/** `still loading (HTTP 503: Loading model)`, as a status line says it. */
export function describeReadiness(readiness: Readiness): string {
  switch (readiness.state) {
    case 'ready':
      return `ready (${readiness.via})`;
    case 'loading':
      return `still loading (HTTP 503: ${readiness.detail})`;
    case 'not_ready':
      return `not ready: ${readiness.detail}`;
    case 'down':
      return `not answering: ${readiness.detail}`;
  }
}

interface StatusAnswer {
  status: number;
  message: string;
}

async function getStatus(url: URL, provider: ReadinessTarget, opts: ReadinessOptions): Promise<StatusAnswer> {
  const headers = checkHeaders(provider);
  const response = await request(url, {
    method: 'GET',
    headers,
    signal: AbortSignal.timeout(opts.timeoutMs ?? 1_000),
    dispatcher: opts.dispatcher,
    // Without a dispatcher of the caller's, no keep-alive: a poll must not leave an idle socket holding the process open.
    reset: opts.dispatcher === undefined,
  });
  const text = await response.body.text();
  // The servers' own words: `{"error":{"message":"Loading model"}}` gives "Loading model".
  return { status: response.statusCode, message: classifyStatus(response.statusCode, text).message };
}

function failureText(error: Error): string {
  const code = errnoCode(error);
  if (error.name === 'TimeoutError' || code === 'UND_ERR_ABORTED') return 'no answer within the poll timeout';
  return code ?? error.message;
}
