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
-- take_rate comes from prelude.lua, prepended when the script is loaded.
local now = now_ms()
return take_rate(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), now)
