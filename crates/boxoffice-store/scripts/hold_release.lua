-- Releases a hold (compare-and-delete): frees only the seats whose key still holds this
-- token, so a stale token never frees a seat someone else holds now.
--
-- KEYS[1]    holdtok:{<event>}:<token>
-- KEYS[2]    held:{<event>}
-- KEYS[3]    holduser:{<event>}:<user>
-- KEYS[4..]  hold:{<event>}:<seat>       the hold's seats
-- ARGV[1]    the token
-- ARGV[2]    the user asking
-- ARGV[3..]  the seat ids of KEYS[4..], in the same order
--
-- Returns 1 released; 0 not live (expired, released, or being checked out), nothing
-- changed; -1 the hold is another user's, nothing changed.
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
for i = 4, #KEYS do
  local seat = ARGV[i - 1]
  if redis.call('GET', KEYS[i]) == ARGV[1] then
    redis.call('DEL', KEYS[i])
    redis.call('ZREM', KEYS[2], seat)
  end
  redis.call('ZREM', KEYS[3], seat)
end
redis.call('DEL', KEYS[1])
return 1
