import type { Redis } from 'ioredis';

/**
 * The Lua scripts behind the shared state: each runs atomically in Redis, so instances never
 * both take the last room in a bucket, the last of a budget, or a key's record. Keys are
 * built by the callers (single Redis, not Cluster). Limit buckets use Redis's own clock
 * (TIME), so instances with skewed clocks share one rate; the arithmetic is state/bucket-math.ts's.
 */

/** Refills a bucket held as level/time fields (the `refill` of state/bucket-math.ts). */
const REFILL = `
local function refill(level, at, cap, rate, now)
  if level == nil then return cap end
  return math.min(cap, level + math.max(0, now - (at or now)) * rate)
end
local function clock()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
`;

/**
 * Takes room for one request: KEYS bucket hash, slot zset; ARGV rpm, tpm, tokens, concurrency,
 * maxWaitMs, slotId, slotMs. Returns {1, '', waitMs} taken (waitMs is the queue wait), or
 * {0, limit, waitMs} nothing taken ('concurrency': every slot is held).
 */
const LIMIT_TAKE = `${REFILL}
local now = clock()
local rpm, tpm, tokens = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local conc, maxWait = tonumber(ARGV[4]), tonumber(ARGV[5])
if conc > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  if redis.call('ZCARD', KEYS[2]) >= conc then return {0, 'concurrency', 0} end
end
local h = redis.call('HMGET', KEYS[1], 'r', 'rt', 'k', 'kt')
local wait, limit = 0, 'rpm'
local r, k
if rpm > 0 then
  local cap = math.max(1, rpm / 60)
  r = refill(tonumber(h[1]), tonumber(h[2]), cap, rpm / 60000, now)
  if r < 1 then wait = (1 - r) / (rpm / 60000) end
end
if tpm > 0 then
  local cap = tpm / 60
  k = refill(tonumber(h[3]), tonumber(h[4]), cap, tpm / 60000, now)
  local need = math.min(tokens, cap)
  if tokens > 0 and k < need then
    local tw = (need - k) / (tpm / 60000)
    if tw > wait then wait, limit = tw, 'tpm' end
  end
end
if wait > maxWait then return {0, limit, math.ceil(wait)} end
if rpm > 0 then redis.call('HSET', KEYS[1], 'r', tostring(r - 1), 'rt', tostring(now)) end
if tpm > 0 then redis.call('HSET', KEYS[1], 'k', tostring(k - tokens), 'kt', tostring(now)) end
redis.call('PEXPIRE', KEYS[1], 3600000)
if conc > 0 and ARGV[6] ~= '' then
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[7]), ARGV[6])
  -- Never shortened: the set holds other slots, some with longer lifetimes.
  if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[7]) + 60000 then redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[7]) + 60000) end
end
return {1, '', math.ceil(wait)}
`;

/** A request ended: KEYS bucket, slots; ARGV tpm, tokens to give back (negative: to take), slotId. */
const LIMIT_SETTLE = `${REFILL}
if ARGV[3] ~= '' then redis.call('ZREM', KEYS[2], ARGV[3]) end
local tpm, delta = tonumber(ARGV[1]), tonumber(ARGV[2])
if tpm > 0 and delta ~= 0 then
  local now = clock()
  local h = redis.call('HMGET', KEYS[1], 'k', 'kt')
  local cap = tpm / 60
  local k = math.min(cap, refill(tonumber(h[1]), tonumber(h[2]), cap, tpm / 60000, now) + delta)
  redis.call('HSET', KEYS[1], 'k', tostring(k), 'kt', tostring(now))
end
return 1
`;

/**
 * A slot still held (its request runs on): KEYS slot zset; ARGV slotId, slotMs. Its lapse moves
 * to slotMs from now; a slot that lapsed meanwhile (or a Redis that lost it) counts again, as
 * it is in use. Never shortens the zset's own expiry.
 */
const LIMIT_RENEW = `${REFILL}
local ms = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], clock() + ms, ARGV[1])
if redis.call('PTTL', KEYS[1]) < ms + 60000 then redis.call('PEXPIRE', KEYS[1], ms + 60000) end
return 1
`;

/**
 * Gives back the holds of reservations past their expiry (their process died). ARGV[4]: the
 * hold key prefix. A window counter already gone (its window long over) is not recreated.
 */
const SWEEP_HOLDS = `
local function sweep(holds, prefix, now)
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', holds, '-inf', now, 'LIMIT', 0, 100)) do
    local fields = redis.call('HGETALL', prefix .. id)
    for i = 1, #fields, 2 do
      local amount = string.match(fields[i + 1], '^%S+ (.+)$')
      if redis.call('EXISTS', fields[i]) == 1 then
        redis.call('HINCRBYFLOAT', fields[i], 'reserved', -tonumber(amount))
      end
    end
    redis.call('DEL', prefix .. id)
    redis.call('ZREM', holds, id)
  end
end
`;

/**
 * All or nothing, a hold on every budget window: KEYS holds zset, this hold's hash, window
 * hashes...; ARGV now, expiresAt, id, hold prefix, then per window limit, need, unit, ttlMs.
 * Returns {1, spent1, reserved1, ...} or {0, index of the window that cannot take it, spent, reserved}.
 */
const BUDGET_RESERVE = `${SWEEP_HOLDS}
local now = tonumber(ARGV[1])
sweep(KEYS[1], ARGV[4], now)
local n = #KEYS - 2
for i = 1, n do
  local b = 4 + (i - 1) * 4
  local limit, need = tonumber(ARGV[b + 1]), tonumber(ARGV[b + 2])
  local row = redis.call('HMGET', KEYS[i + 2], 'spent', 'reserved')
  local spent, reserved = tonumber(row[1]) or 0, math.max(0, tonumber(row[2]) or 0)
  local available = limit - spent - reserved
  if available <= 1e-9 or need > available + 1e-9 then return {0, i, tostring(spent), tostring(reserved)} end
end
local out = {1}
-- The hold's hash lasts as long as its longest window counter: it holds the amounts the sweep
-- gives back, which may be the next reserve on a quiet budget, long after the hold expired.
local holdTtl = math.max(1, tonumber(ARGV[2]) - now) + 86400000
for i = 1, n do
  local b = 4 + (i - 1) * 4
  local key = KEYS[i + 2]
  redis.call('HINCRBYFLOAT', key, 'reserved', ARGV[b + 2])
  redis.call('PEXPIRE', key, ARGV[b + 4])
  redis.call('HSET', KEYS[2], key, ARGV[b + 3] .. ' ' .. ARGV[b + 2])
  holdTtl = math.max(holdTtl, tonumber(ARGV[b + 4]))
  local row = redis.call('HMGET', key, 'spent', 'reserved')
  table.insert(out, row[1] or '0')
  table.insert(out, row[2] or '0')
end
if n > 0 then
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
  redis.call('PEXPIRE', KEYS[2], holdTtl)
end
return out
`;

/**
 * Ends a hold: KEYS holds zset, the hold's hash; ARGV actual tokens, actual usd, id, 1 settle | 0 release.
 * Returns {window, spent, reserved, ...} for the windows it touched.
 */
const BUDGET_END = `
local fields = redis.call('HGETALL', KEYS[2])
local out = {}
for i = 1, #fields, 2 do
  local key = fields[i]
  local unit, amount = string.match(fields[i + 1], '^(%S+) (.+)$')
  redis.call('HINCRBYFLOAT', key, 'reserved', -tonumber(amount))
  if ARGV[4] == '1' then
    redis.call('HINCRBYFLOAT', key, 'spent', unit == 'tokens' and ARGV[1] or ARGV[2])
  end
  local row = redis.call('HMGET', key, 'spent', 'reserved')
  table.insert(out, key)
  table.insert(out, row[1] or '0')
  table.insert(out, row[2] or '0')
end
redis.call('DEL', KEYS[2])
redis.call('ZREM', KEYS[1], ARGV[3])
return out
`;

/**
 * Adds spend counted elsewhere (on local counters while Redis was away), once: KEYS the
 * batch's marker, then windows; ARGV the marker's ttlMs, then amount, ttlMs per window.
 * A batch made again (its first reply was lost) finds its marker and adds nothing.
 */
const BUDGET_CHARGE = `
if not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then return 0 end
for i = 2, #KEYS do
  redis.call('HINCRBYFLOAT', KEYS[i], 'spent', ARGV[i * 2 - 2])
  redis.call('PEXPIRE', KEYS[i], ARGV[i * 2 - 1])
end
return #KEYS - 1
`;

/**
 * An Idempotency-Key record: KEYS record; ARGV fingerprint, owner, leaseMs. Creates it PENDING
 * for this owner, or returns what is there: {'owner'} | {'mismatch'} | {'running', state} |
 * {'completed', status, headers, body}.
 */
const IDEM_BEGIN = `
local state = redis.call('HGET', KEYS[1], 'state')
if not state then
  redis.call('HSET', KEYS[1], 'state', 'PENDING', 'fp', ARGV[1], 'owner', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return {'owner'}
end
if redis.call('HGET', KEYS[1], 'fp') ~= ARGV[1] then return {'mismatch'} end
if state == 'COMPLETED' then
  local v = redis.call('HMGET', KEYS[1], 'status', 'headers', 'body')
  return {'completed', v[1], v[2], v[3]}
end
return {'running', state}
`;

/** Only the owner moves a running record on: KEYS record; ARGV owner, then the step's own. */
const OWNER_CHECK = `
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] or redis.call('HGET', KEYS[1], 'state') == 'COMPLETED' then return 0 end
`;

/** ARGV owner, new state (EXECUTING_FALLBACK, or '' to only renew), leaseMs. */
const IDEM_RENEW = `${OWNER_CHECK}
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'state', ARGV[2]) end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`;

/** ARGV owner, status, headers (JSON), body, ttlMs, channel. */
const IDEM_COMPLETE = `${OWNER_CHECK}
redis.call('HSET', KEYS[1], 'state', 'COMPLETED', 'status', ARGV[2], 'headers', ARGV[3], 'body', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('PUBLISH', ARGV[6], KEYS[1])
return 1
`;

/** ARGV owner, channel. */
const IDEM_ABANDON = `${OWNER_CHECK}
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[2], KEYS[1])
return 1
`;

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
