-- One request against a rate limit, by the generic cell rate algorithm (GCRA): the same
-- rule as the server's in-memory limiter, kept in Redis so every server instance counts
-- against one limit.
--
-- KEYS[1]  ratelimit:<limit>:<client>  the theoretical arrival time (ms, Redis' clock) of
--                                      the client's next request if it kept to the rate
-- ARGV[1]  emission interval: milliseconds of the rate one request uses (60000 / per minute)
-- ARGV[2]  burst: how many requests may come at once
--
-- Returns 0 when the request is allowed (and counted), else the milliseconds until the
-- next request would be (nothing counted). The key expires once the client is back to a
-- full burst, so idle clients cost nothing.
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then
  tat = now
end
local allowed_at = tat + interval - burst * interval
if now < allowed_at then
  return math.ceil(allowed_at - now)
end
local next_tat = tat + interval
redis.call('SET', KEYS[1], next_tat, 'PX', math.max(1, math.ceil(next_tat - now)))
return 0
