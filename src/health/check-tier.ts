import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import type { Tier } from '../config/schema.js';
import { redactSecrets } from '../providers/redact-secrets.js';
import { describeFailure } from './check-failure.js';
import { Deadline, type Http } from './deadline.js';
import { StillLoading, timeFirstToken } from './first-token.js';
import { profileOf } from '../protocols/profiles.js';
import { askServer, listModels, missingModel, servesModel, type ModelListing } from './upstream-models.js';

/**
 * One active check of one tier: can its provider be reached, does it serve the tier's model,
 * and (optionally) how long a 1-token streaming request takes to its first token.
 * Used by `llm-route probe`; bounded by one deadline, so a dead tier cannot hang the caller.
 */
export interface TierCheck {
  /** The provider answered HTTP (any status) on its model list. */
  reachable: boolean;
  /** null: unknown (the server has no model list, or it could not be read). */
  modelPresent: boolean | null;
  /** From sending the 1-token request to its first content event; null when not measured. */
  ttftMs: number | null;
  /** A server that says it in one request (Ollama's /api/ps): the model was in memory before the check (false: the next request loads it); null when unknown. */
  loaded?: boolean | null;
  /** `loading`: the server answered 503 while loading its model; not ready, not broken. */
  status: 'healthy' | 'unhealthy' | 'loading';
  /** Why the tier is unhealthy or loading; never contains the provider's API key. */
  error?: string;
  /** Worth knowing though healthy: the server answered for a model it does not list (it serves any name). */
  note?: string;
  durationMs: number;
}

export interface CheckTierOptions {
  /** Bound on the whole check (model list and TTFT request together). */
  timeoutMs: number;
  /** Also send a 1-token streaming request and time its first token. */
  ttft: boolean;
  signal?: AbortSignal;
  /** Defaults to undici's global dispatcher. */
  dispatcher?: Dispatcher;
}

export async function checkTier(tier: Tier, opts: CheckTierOptions): Promise<TierCheck> {
  const startedAt = performance.now();
  const deadline = new Deadline(opts.timeoutMs, opts.signal);
  const http: Http = { signal: deadline.signal, dispatcher: opts.dispatcher };
  const provider = tier.provider;
  const finish = (fields: Omit<TierCheck, 'status' | 'durationMs' | 'error'>, problems: string[], loading = false): TierCheck => {
    const status = loading ? 'loading' : problems.length === 0 ? 'healthy' : 'unhealthy';
    const result: TierCheck = { ...fields, status, durationMs: Math.round(performance.now() - startedAt) };
    if (problems.length > 0) result.error = redactSecrets(problems.join('; '), provider);
    if (fields.note !== undefined) result.note = redactSecrets(fields.note, provider);
    return result;
  };

  try {
    let listing: ModelListing;
    try {
      listing = await listModels(provider, http);
    } catch (error) {
      return finish({ reachable: false, modelPresent: null, ttftMs: null }, [describeFailure(error, deadline, provider, 'listing models')]);
    }

    if (listing.kind === 'loading') {
      return finish({ reachable: true, modelPresent: null, ttftMs: null }, [`still loading (HTTP 503: ${listing.message})`], true);
    }
    const problems: string[] = [];
    if (listing.kind === 'rejected') problems.push(listing.error);
    const modelPresent = listing.kind === 'listed' ? servesModel(listing.models, tier.model) : null;
    const missing = listing.kind === 'listed' && !modelPresent ? missingModel(tier.model, listing.models) : null;

    // Asked before the 1-token request, which would load the model itself; only of a server that says it in one request.
    const profile = profileOf(provider);
    const loaded = profile.loadedInOneAsk(provider)
      ? await profile.loadedState(tier, askServer(provider, http)).then(
          (word) => word?.loaded ?? null,
          () => null,
        )
      : undefined;

    let ttftMs: number | null = null;
    let ttftProblem: string | null = null;
    let loading = false;
    // A model missing from the list is decided by a 1-token request: llama.cpp lists one name
    // (its alias) and serves any. A refused key would refuse that request too: one message is enough.
    // A provider sent the client's own credential gets none: checks never send one (reachability only).
    if ((opts.ttft || missing) && !provider.from_client && !(listing.kind === 'rejected' && listing.auth)) {
      try {
        ttftMs = Math.round(await timeFirstToken(tier, http));
      } catch (error) {
        loading = error instanceof StillLoading;
        ttftProblem = describeFailure(error, deadline, provider, 'waiting for the first token');
      }
    }
    let note: string | undefined;
    if (provider.from_client) note = "reachability only: the provider takes the client's own credential (api_key: from_client), which checks never send";
    else if (missing && ttftMs !== null) note = `${missing}, yet it answered a request for it: the server serves any model name`;
    else if (missing) problems.push(missing);
    if (ttftProblem) problems.push(ttftProblem);
    return finish({ reachable: true, modelPresent, ttftMs, ...(loaded !== undefined ? { loaded } : {}), ...(note ? { note } : {}) }, problems, loading);
  } finally {
    deadline.dispose();
  }
}
