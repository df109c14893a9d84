import type { Pool } from 'undici';
import { createStaleAwarePool } from '../util/stale-socket-pool.js';
import { aggregate, type TierResult } from './aggregate.js';
import { measureRequest, type Sample } from './measure.js';
import { benchPrompts } from './prompts.js';
import type { BenchTarget } from './targets.js';

export interface BenchSettings {
  /** Requests per target. */
  requests: number;
  /** Requests in flight at once, per target. */
  concurrency: number;
  /** The user message; each request gets a unique one built from it unless `samePrompt`. */
  prompt: string;
  samePrompt?: boolean;
}

/** Called as each target starts and after every finished request: requests done and planned over the whole run. */
export type ProgressListener = (done: number, total: number, current: BenchTarget) => void;

/**
 * Benches the targets one after another, so tiers never compete for the same machine or link;
 * within a target, `concurrency` workers share the request count. One pool per provider (or
 * per proxy), closed before returning; its stale keep-alive sockets are retried, not counted.
 */
export async function benchTargets(targets: readonly BenchTarget[], settings: BenchSettings, onProgress: ProgressListener = () => {}): Promise<TierResult[]> {
  const pools = createPools(targets, settings.concurrency);
  const total = targets.length * settings.requests;
  const promptFor = benchPrompts(settings.prompt, settings.samePrompt === true);
  let done = 0;
  try {
    const results: TierResult[] = [];
    for (const target of targets) {
      onProgress(done, total, target); // shows the bar before the first (maybe slow) answer
      const pool = pools.get(target.poolKey) as Pool;
      const samples = await benchTarget(pool, target, settings, promptFor, () => onProgress(++done, total, target));
      results.push(aggregate(target, samples, settings.samePrompt === true));
    }
    return results;
  } finally {
    await Promise.all([...pools.values()].map((pool) => pool.destroy().catch(() => undefined)));
  }
}

async function benchTarget(pool: Pool, target: BenchTarget, settings: BenchSettings, promptFor: () => string, onSample: () => void): Promise<Sample[]> {
  const samples: Sample[] = [];
  let started = 0;
  const worker = async (): Promise<void> => {
    while (started < settings.requests) {
      started++;
      samples.push(await measureRequest(pool, target, promptFor()));
      onSample();
    }
  };
  const workers = Math.min(settings.concurrency, settings.requests);
  await Promise.all(Array.from({ length: workers }, worker));
  return samples;
}

/** undici has no per-request connect timeout, so a pool uses the smallest connect_ms of its targets. */
function createPools(targets: readonly BenchTarget[], concurrency: number): Map<string, Pool> {
  const connectMs = new Map<string, number>();
  const origins = new Map<string, string>();
  for (const target of targets) {
    const current = connectMs.get(target.poolKey);
    if (current === undefined || target.connectTimeoutMs < current) connectMs.set(target.poolKey, target.connectTimeoutMs);
    origins.set(target.poolKey, target.origin);
  }
  const pools = new Map<string, Pool>();
  for (const [key, origin] of origins) {
    pools.set(
      key,
      createStaleAwarePool(origin, {
        connections: concurrency,
        connectTimeout: connectMs.get(key),
        pipelining: 1,
        headersTimeout: 0,
        bodyTimeout: 0,
      }),
    );
  }
  return pools;
}
