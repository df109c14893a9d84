/**
 * The Lua of the Redis budget ledger (usage/budgets/): all-or-nothing holds on every budget
 * window, their settle or release, the sweep of holds whose process died, and spend counted
 * elsewhere added once. Registered as commands by redis-scripts.ts.
 */

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
export const BUDGET_RESERVE = `${SWEEP_HOLDS}
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
export const BUDGET_END = `
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
export const BUDGET_CHARGE = `
if not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then return 0 end
for i = 2, #KEYS do
  redis.call('HINCRBYFLOAT', KEYS[i], 'spent', ARGV[i * 2 - 2])
  redis.call('PEXPIRE', KEYS[i], ARGV[i * 2 - 1])
end
return #KEYS - 1
`;
