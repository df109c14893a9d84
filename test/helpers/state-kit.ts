import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe } from 'vitest';
import type { RunningProxy } from './proxy.js';
import { type ConfigSpec, configYaml } from './proxy.js';
import { SKIP_REDIS } from './redis-available.js';
import { RedisServer } from './redis-server.js';
import type { useHarness } from './harness.js';
import { waitFor } from './harness.js';

export type Backend = 'embedded' | 'redis';
export const BACKENDS: Backend[] = ['embedded', 'redis'];

/**
 * describe.each over both backends, the name's `%s` the backend. Without redis-server on a
 * developer's machine the Redis suite is registered as skipped, not left out, so a run counts
 * the same tests everywhere and its end says how many were skipped (skip-reporter.ts).
 */
export function describeEachBackend(name: string, body: (backend: Backend) => void): void {
  for (const backend of BACKENDS) describe.skipIf(backend === 'redis' && SKIP_REDIS)(name.replace('%s', backend), () => body(backend));
}

/** One redis-server for the test file (a fresh key prefix per test keeps tests apart). */
export function useRedis(): () => RedisServer {
  let server: RedisServer | null = null;
  beforeAll(async () => {
    if (SKIP_REDIS) return;
    server = await RedisServer.start();
  });
  afterAll(async () => {
    await server?.stop();
  });
  return () => {
    if (!server) throw new Error('redis-server is not started');
    return server;
  };
}

/**
 * "Several instances" of one tier file: on Redis, `count` proxies sharing it (a fresh key
 * prefix); embedded, one proxy stands for all of them (what is shared lives in it).
 */
export async function instances(
  h: ReturnType<typeof useHarness>,
  backend: Backend,
  redis: () => RedisServer,
  spec: ConfigSpec,
  count = 2,
): Promise<RunningProxy[]> {
  const top: Record<string, unknown> = { ...spec.top };
  if (backend === 'redis') top.state = { redis: redis().url, prefix: `t-${randomUUID().slice(0, 8)}:` };
  const yaml = configYaml({ ...spec, top });
  if (backend === 'embedded') {
    const one = await h.proxy(yaml);
    return Array.from({ length: count }, () => one);
  }
  const proxies: RunningProxy[] = [];
  for (let i = 0; i < count; i++) proxies.push(await h.proxy(yaml));
  await Promise.all(proxies.map((p) => waitFor(() => p.server.state.up, 5000, 'the instance to reach Redis')));
  return proxies;
}
