import type { Tier } from '../config/schema.js';
import { Deadline, type Http } from '../health/deadline.js';
import { askServer } from '../health/upstream-models.js';
import { profileOf } from '../protocols/profiles.js';
import { redactSecrets } from '../providers/redact-secrets.js';
import type { Discovered } from './tier-facts.js';
import type { Dispatcher } from 'undici';

/** What discovery learned, or why it learned nothing (a slow, failing or malformed answer: unknown). */
export interface Discovery {
  facts: Discovered;
  /** Set when an endpoint failed to answer or answered garbage (not when a server simply documents none). */
  error?: string;
  /** Every endpoint tried failed: the server is probably down. */
  unreachable?: true;
}

/**
 * A tier's context window, vision and tools, from what its server itself documents (docs/fit.md),
 * as its provider's profile reads them: Ollama `POST /api/show` + `GET /api/ps`; for an
 * openai-type server, vLLM's `max_model_len` in `/v1/models`, llama.cpp's `/props`, LM Studio's
 * `/api/v0/models`, first that answers. Bounded by `timeoutMs`; never throws.
 */
export async function discoverTier(tier: Tier, opts: { timeoutMs: number; signal?: AbortSignal; dispatcher?: Dispatcher }): Promise<Discovery> {
  const readers = profileOf(tier.provider).discovery(tier.provider);
  if (readers.length === 0) return { facts: {} };
  const deadline = new Deadline(opts.timeoutMs, opts.signal);
  const http: Http = { signal: deadline.signal, dispatcher: opts.dispatcher };
  const errors: string[] = [];
  const attempt = async <T>(what: string, read: () => Promise<T | null>): Promise<T | null> => {
    try {
      return await read();
    } catch (error) {
      errors.push(`${what}: ${deadline.timedOut ? `no answer within ${opts.timeoutMs} ms` : (error as Error).message}`);
      return null;
    }
  };
  try {
    const ask = askServer(tier.provider, http);
    let tried = 0;
    for (const reader of readers) {
      tried++;
      const facts = await attempt(reader.name, () => reader.read(tier, ask));
      if (facts) return { facts };
      if (deadline.timedOut || deadline.cancelled) break;
    }
    // A server that documents none answers 404s (no error); one that failed or was too slow says why.
    if (errors.length === 0) return { facts: {} };
    return { facts: {}, error: redactSecrets(errors.join('; '), tier.provider), ...(errors.length === tried ? { unreachable: true } : {}) };
  } finally {
    deadline.dispose();
  }
}
