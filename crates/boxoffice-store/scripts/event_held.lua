-- Lists an event's live holds in one call, however many seats are held.
--
-- KEYS[1]  held:{<event>}  seat id -> expiry (ms)
--
-- Returns {seat id, expiry ms, seat id, expiry ms, ...} for every hold that has not
-- lapsed by Redis' clock.
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf', 'WITHSCORES')
