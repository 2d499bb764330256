-- Lists an event's live holds in one call, however many seats are held.
--
-- KEYS[1]  held:{<event>}  seat id -> expiry (ms)
--
-- Returns {seat id, expiry ms, seat id, expiry ms, ...} for every hold that has not
-- lapsed by Redis' clock.
local now = now_ms()
return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf', 'WITHSCORES')
