-- Starts a checkout: checks that the token still owns every seat of its hold, and then
-- protects those seats from being taken over while Postgres commits the order, even if
-- the hold's own time runs out meanwhile.
--
-- KEYS[1]    holdtok:{<event>}:<token>
-- KEYS[2]    held:{<event>}
-- KEYS[3]    passend:{<event>}:<ticket>  of the pass the hold was made under, if any
-- KEYS[4..]  hold:{<event>}:<seat>       the hold's seats
-- ARGV[1]    the token
-- ARGV[2]    the user asking
-- ARGV[3]    how long to protect the seats (ms): longer than any commit can take
-- ARGV[4]    the hold's seats (JSON) as read with KEYS[4..]
-- ARGV[5..]  the seat ids of KEYS[4..], in the same order
--
-- Returns {1, the hold's own expiry (ms), the seats with their quotes (JSON)};
--         {0} not live; {-1} another user's hold; {-2} the hold's seats changed since
--         ARGV[4] was read (read it again). Nothing changes unless the answer is 1.
--
-- The hold must be live by Redis' clock when the script runs, as a Postgres checkout's
-- must be at its statement's start. Its keys can outlive its own time: a checkout that
-- protected them and then failed to commit, or whose instance died, leaves them protected
-- for ARGV[3]; a checkout asked again meanwhile must still find the hold expired.
--
-- A hold made under a waiting-room pass ends the pass here (until it would have expired),
-- while its seats still count as the buyer's held ones: a hold asked under the same pass
-- either comes before (and counts these seats) or after (and is refused). A checkout
-- that then fails to commit leaves the pass ended; the buyer keeps the hold and may
-- check it out again.
-- outlive(key, at) comes from prelude.lua, prepended when the script is loaded.

local hold = redis.call('HMGET', KEYS[1], 'u', 'x', 's', 'pe')
if not hold[1] then
  return {0}
end
if hold[1] ~= ARGV[2] then
  return {-1}
end
local now = now_ms()
local expires = tonumber(hold[2])
if expires <= now then
  return {0}
end
if hold[3] ~= ARGV[4] then
  return {-2}
end
for i = 4, #KEYS do
  if redis.call('GET', KEYS[i]) ~= ARGV[1] then
    return {0}
  end
end
local protected = math.max(expires, now + tonumber(ARGV[3]))
for i = 4, #KEYS do
  redis.call('PEXPIREAT', KEYS[i], protected)
  redis.call('ZADD', KEYS[2], protected, ARGV[i + 1])
end
if hold[4] and tonumber(hold[4]) > now then
  redis.call('SET', KEYS[3], 1, 'PXAT', hold[4])
end
redis.call('HSET', KEYS[1], 'co', 1)
redis.call('PEXPIREAT', KEYS[1], protected)
outlive(KEYS[2], protected)
return {1, expires, hold[3]}
