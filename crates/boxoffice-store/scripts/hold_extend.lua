-- Extends a live hold (compare-and-extend): its expiry becomes now + TTL, never past its
-- creation + the event's longest hold, and never earlier than it was.
--
-- KEYS[1]    holdtok:{<event>}:<token>
-- KEYS[2]    held:{<event>}
-- KEYS[3]    holduser:{<event>}:<user>
-- KEYS[4..]  hold:{<event>}:<seat>       the hold's seats
-- ARGV[1]    the token
-- ARGV[2]    the user asking
-- ARGV[3]    time to live (ms)
-- ARGV[4]    longest hold from creation (ms)
-- ARGV[5]    the hold's seats (JSON) as read with KEYS[4..]
-- ARGV[6..]  the seat ids of KEYS[4..], in the same order
--
-- Returns the new expiry (ms); 0 not live (expired, released, or being checked out);
-- -1 another user's hold; -2 the hold's seats changed since ARGV[5] was read (read it
-- again). Nothing changes unless the answer is an expiry.
-- outlive(key, at) comes from prelude.lua, prepended when the script is loaded.

local hold = redis.call('HMGET', KEYS[1], 'u', 'c', 'x', 'co', 's')
if not hold[1] then
  return 0
end
if hold[1] ~= ARGV[2] then
  return -1
end
if hold[4] then
  return 0
end
if hold[5] ~= ARGV[5] then
  return -2
end
local now = now_ms()
local expires = math.max(tonumber(hold[3]),
  math.min(now + tonumber(ARGV[3]), tonumber(hold[2]) + tonumber(ARGV[4])))
for i = 4, #KEYS do
  local seat = ARGV[i + 2]
  if redis.call('GET', KEYS[i]) == ARGV[1] then
    redis.call('PEXPIREAT', KEYS[i], expires)
    redis.call('ZADD', KEYS[2], expires, seat)
    redis.call('ZADD', KEYS[3], expires, seat)
  end
end
redis.call('HSET', KEYS[1], 'x', expires)
redis.call('PEXPIREAT', KEYS[1], expires)
outlive(KEYS[2], expires)
outlive(KEYS[3], expires)
return expires
