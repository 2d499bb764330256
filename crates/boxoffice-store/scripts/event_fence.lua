-- Starts an allocation change: from now until the fence is lifted (or lapses), no hold is
-- taken in the event; the loaded state is dropped, so the next hold reloads the layout
-- version from Postgres; and every live hold at this moment is returned, to be left
-- alone by the change.
--
-- KEYS[1]  fence:{<event>}
-- KEYS[2]  sync:{<event>}
-- KEYS[3]  loading:{<event>}  a load in progress, now invalid
-- KEYS[4]  held:{<event>}
-- ARGV[1]  the fence's id
-- ARGV[2]  how long the fence lasts (ms), should the change never finish
--
-- Returns {seat id, expiry ms, ...} as event_held.lua.
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('DEL', KEYS[2], KEYS[3])
local now = now_ms()
return redis.call('ZRANGEBYSCORE', KEYS[4], '(' .. now, '+inf', 'WITHSCORES')
