-- Releases a hold (compare-and-delete): frees only the seats whose key still holds this
-- token, so a stale token never frees a seat someone else holds now.
--
-- KEYS[1]    holdtok:{<event>}:<token>
-- KEYS[2]    held:{<event>}
-- KEYS[3]    holduser:{<event>}:<user>
-- KEYS[4]    passend:{<event>}:<ticket>  of the pass the hold was made under, if any
-- KEYS[5..]  hold:{<event>}:<seat>       the hold's seats
-- ARGV[1]    the token
-- ARGV[2]    the user asking
-- ARGV[3]    '1' if releasing the buyer's last hold ends the pass it was made under
-- ARGV[4]    the hold's seats (JSON) as read with KEYS[5..], or '' to release whatever
--            of KEYS[5..] still holds the token
-- ARGV[5..]  the seat ids of KEYS[5..], in the same order
--
-- Returns 1 released; 2 released, and the pass ended (the buyer holds nothing more in
-- the event); 0 not live (expired, released, or being checked out), nothing changed;
-- -1 the hold is another user's, nothing changed; -2 the hold's seats changed since
-- ARGV[4] was read (read it again), nothing changed.
local owner = redis.call('HGET', KEYS[1], 'u')
if not owner then
  return 0
end
if owner ~= ARGV[2] then
  return -1
end
if redis.call('HEXISTS', KEYS[1], 'co') == 1 then
  return 0
end
if ARGV[4] ~= '' and redis.call('HGET', KEYS[1], 's') ~= ARGV[4] then
  return -2
end
for i = 5, #KEYS do
  local seat = ARGV[i]
  if redis.call('GET', KEYS[i]) == ARGV[1] then
    redis.call('DEL', KEYS[i])
    redis.call('ZREM', KEYS[2], seat)
  end
  redis.call('ZREM', KEYS[3], seat)
end
local pass = redis.call('HMGET', KEYS[1], 'p', 'pe')
redis.call('DEL', KEYS[1])
if ARGV[3] == '1' and pass[1] then
  local now = now_ms()
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  if redis.call('ZCARD', KEYS[3]) == 0 and tonumber(pass[2]) > now then
    redis.call('SET', KEYS[4], 1, 'PXAT', pass[2])
    return 2
  end
end
return 1
