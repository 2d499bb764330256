-- Prepended to every script of the redis hold store and to rate_limit.lua when they are
-- loaded (`with_prelude`), so each rule lives in one place.

-- Redis' clock in milliseconds: every rule of time is judged by the clock that expires the
-- keys.
local function now_ms()
  local clock = redis.call('TIME')
  return tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
end

-- The event's state as loaded from Postgres (`sync_key`'s layout version 'v', its start
-- 's', then the fields `...` asked), for a claim quoted at layout `version`; or nil and the
-- refusal: 'load' while it is not loaded ('busy' while `loading_key` says a load is under
-- way), 'stale' with the version loaded when the quote is of another.
local function event_state(sync_key, loading_key, version, ...)
  local sync = redis.call('HMGET', sync_key, 'v', 's', ...)
  if not sync[1] then
    if redis.call('EXISTS', loading_key) == 1 then
      return nil, {'busy'}
    end
    return nil, {'load'}
  end
  if sync[1] ~= version then
    return nil, {'stale', tonumber(sync[1])}
  end
  return sync
end

-- Keeps an index key alive exactly as long as its latest entry (the key may have no
-- expiry yet, which PEXPIREAT ... GT would treat as infinite).
local function outlive(key, at)
  if redis.call('PEXPIREAT', key, at, 'GT') == 0 then
    redis.call('PEXPIREAT', key, at, 'NX')
  end
end

-- Counts one request against a rate by the generic cell rate algorithm: `key` keeps the
-- time (ms) the next request would arrive if the client kept to the rate; `interval` is
-- the share of time one request uses, `burst` how many may come at once. Returns 0 when
-- the request is allowed (and counted), else the ms until one would be (nothing counted).
-- The key expires once the client is back to a full burst, so idle clients cost nothing.
local function take_rate(key, interval, burst, now)
  local tat = tonumber(redis.call('GET', key) or now)
  if tat < now then
    tat = now
  end
  local allowed_at = tat + interval - burst * interval
  if now < allowed_at then
    return math.ceil(allowed_at - now)
  end
  local next_tat = tat + interval
  redis.call('SET', key, next_tat, 'PX', math.max(1, math.ceil(next_tat - now)))
  return 0
end

-- What a claim of `count` more seats by a buyer is refused for, past the event's state, in
-- this order: the hold rate (`rate_key`, `interval` and `burst` as take_rate takes them;
-- an interval of 0 for none), the pass (`pass` the ticket or '', `pass_key` present once
-- it ended), the buyer's limit (`user_key` their held seats scored by expiry, lapsed ones
-- dropped here). Returns nil when none refuses it, else the refusal to answer.
local function claim_refusal(rate_key, interval, burst, pass, pass_key, user_key, count, most,
                             now)
  if interval > 0 then
    local wait = take_rate(rate_key, interval, burst, now)
    if wait > 0 then
      return {'rate', wait}
    end
  end
  if pass ~= '' and redis.call('EXISTS', pass_key) == 1 then
    return {'pass_ended'}
  end
  redis.call('ZREMRANGEBYSCORE', user_key, '-inf', now)
  if redis.call('ZCARD', user_key) + count > most then
    return {'limit'}
  end
  return nil
end

-- A season's claim (src/redis/holds/season.rs) marks its seats in each event for a moment
-- before it holds them: the seat's key holds 'p:' followed by the claim's token in that
-- event. Whether `holder` (a seat key's value, or false) is another claim's mark than
-- `own` (the caller's mark, or ''): such a seat is neither free nor taken until that claim
-- holds it or lets it go, so the caller answers 'busy' and asks again shortly.
local function marked_by_other(holder, own)
  return holder and holder ~= own and string.sub(holder, 1, 2) == 'p:'
end
