/**
 * The Lua of the shared rate limits (state's limits): take room in a request/token bucket and a
 * concurrency slot, settle the tokens a request really used, renew a slot still held. Buckets use
 * Redis's own clock (TIME), so instances with skewed clocks share one rate; the arithmetic is
 * state/bucket-math.ts's. Registered as commands by redis-scripts.ts.
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
export const LIMIT_TAKE = `${REFILL}
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
export const LIMIT_SETTLE = `${REFILL}
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
export const LIMIT_RENEW = `${REFILL}
local ms = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], clock() + ms, ARGV[1])
if redis.call('PTTL', KEYS[1]) < ms + 60000 then redis.call('PEXPIRE', KEYS[1], ms + 60000) end
return 1
`;
