/**
 * The Lua of shared Idempotency-Key records (state's idempotency): begin (or find) a record,
 * and the owner's steps on it: renew its lease, complete it with the answer, abandon it.
 * Registered as commands by redis-scripts.ts.
 */

/**
 * An Idempotency-Key record: KEYS record; ARGV fingerprint, owner, leaseMs. Creates it PENDING
 * for this owner, or returns what is there: {'owner'} | {'mismatch'} | {'running', state} |
 * {'completed', status, headers, body}.
 */
export const IDEM_BEGIN = `
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
export const IDEM_RENEW = `${OWNER_CHECK}
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'state', ARGV[2]) end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`;

/** ARGV owner, status, headers (JSON), body, ttlMs, channel. */
export const IDEM_COMPLETE = `${OWNER_CHECK}
redis.call('HSET', KEYS[1], 'state', 'COMPLETED', 'status', ARGV[2], 'headers', ARGV[3], 'body', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('PUBLISH', ARGV[6], KEYS[1])
return 1
`;

/** ARGV owner, channel. */
export const IDEM_ABANDON = `${OWNER_CHECK}
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[2], KEYS[1])
return 1
`;
