-- Reads a hold with Redis' clock, so whether it is live is judged by the clock that
-- expires it.
--
-- KEYS[1]  holdtok:{<event>}:<token>
--
-- Returns {user, created ms, expires ms, seats JSON, checking out (1 or nil), now ms,
-- pass ticket or nil, for a season claim's hold the number of events it holds seats in or
-- nil}; the first four are nil when there is no such hold.
local now = now_ms()
local hold = redis.call('HMGET', KEYS[1], 'u', 'c', 'x', 's', 'co', 'p', 'n')
return {hold[1], hold[2], hold[3], hold[4], hold[5], now, hold[6], hold[7]}
