import type { Redis } from 'ioredis';
import { BUDGET_CHARGE, BUDGET_END, BUDGET_RESERVE } from './budget-scripts.js';
import { IDEM_ABANDON, IDEM_BEGIN, IDEM_COMPLETE, IDEM_RENEW } from './idempotency-scripts.js';
import { LIMIT_RENEW, LIMIT_SETTLE, LIMIT_TAKE } from './limit-scripts.js';

/**
 * The Lua scripts behind the shared state, as commands on a connection: each runs atomically in
 * Redis, so instances never both take the last room in a bucket, the last of a budget, or a key's
 * record. Keys are built by the callers (single Redis, not Cluster). The scripts' text lives by
 * what it guards: limit-scripts.ts, budget-scripts.ts, idempotency-scripts.ts; the weights' one
 * script is below.
 */

/**
 * A tier's overrides, stored and announced in one step unless Redis holds a change as new or newer
 * (two instances back from an outage push at once: the older must not land last); that stored
 * change is then the reply. KEYS hash; ARGV field, value, channel, message, the value's updatedAt.
 */
const WEIGHTS_PUT = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current then
  local ok, stored = pcall(cjson.decode, current)
  if ok and type(stored) == 'table' and type(stored.layers) == 'table' then
    local at = tonumber(stored.layers.updatedAt)
    if at and at >= tonumber(ARGV[5]) then return current end
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
`;

type Arg = string | number | Buffer;
type Call<R = unknown> = (...args: Arg[]) => Promise<R>;

/** The scripts as commands on a connection (EVALSHA, loaded on first use). */
export interface Scripts {
  llmLimitTake: Call<[number, string, number]>;
  llmLimitSettle: Call<number>;
  llmLimitRenew: Call<number>;
  llmBudgetReserve: Call<Array<number | string>>;
  llmBudgetEnd: Call<string[]>;
  llmBudgetCharge: Call<number>;
  llmIdemBeginBuffer: Call<Buffer[]>;
  llmIdemRenew: Call<number>;
  llmIdemComplete: Call<number>;
  llmIdemAbandon: Call<number>;
  /** 1 when stored, else the stored change that is as new or newer. */
  llmWeightsPut: Call<number | string>;
}

const DEFINITIONS: Record<string, { numberOfKeys?: number; lua: string }> = {
  llmLimitTake: { numberOfKeys: 2, lua: LIMIT_TAKE },
  llmLimitSettle: { numberOfKeys: 2, lua: LIMIT_SETTLE },
  llmLimitRenew: { numberOfKeys: 1, lua: LIMIT_RENEW },
  // The number of budget windows varies: the key count is the call's first argument.
  llmBudgetReserve: { lua: BUDGET_RESERVE },
  llmBudgetEnd: { numberOfKeys: 2, lua: BUDGET_END },
  llmBudgetCharge: { lua: BUDGET_CHARGE },
  llmIdemBegin: { numberOfKeys: 1, lua: IDEM_BEGIN },
  llmIdemRenew: { numberOfKeys: 1, lua: IDEM_RENEW },
  llmIdemComplete: { numberOfKeys: 1, lua: IDEM_COMPLETE },
  llmIdemAbandon: { numberOfKeys: 1, lua: IDEM_ABANDON },
  llmWeightsPut: { numberOfKeys: 1, lua: WEIGHTS_PUT },
};

export function defineScripts(redis: Redis): Redis & Scripts {
  for (const [name, definition] of Object.entries(DEFINITIONS)) redis.defineCommand(name, definition);
  return redis as Redis & Scripts;
}
