-- Prepended to the scripts that call these helpers (hold_acquire, hold_checkout,
-- hold_extend, rate_limit) when they are loaded, so each rule lives in one place.

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
