-- Ends a checkout that did not sell: the hold gets back its own expiry (or goes, if that
-- has passed, or if it must be dropped), and stops being protected.
--
-- KEYS[1]    holdtok:{<event>}:<token>
-- KEYS[2]    held:{<event>}
-- KEYS[3]    holduser:{<event>}:<user>
-- KEYS[4]    sync:{<event>}
-- KEYS[5..]  hold:{<event>}:<seat>       the hold's seats
-- ARGV[1]    the token
-- ARGV[2]    '1' to drop the hold and have the event's sold seats loaded again from
--            Postgres (Postgres refused the order: Redis did not know a seat was sold),
--            else '0'
-- ARGV[3..]  the seat ids of KEYS[5..], in the same order
--
-- Returns 1 if the hold is live again, 0 if it is gone.
if ARGV[2] == '1' then
  redis.call('DEL', KEYS[4])
end
local expires = tonumber(redis.call('HGET', KEYS[1], 'x'))
if not expires or redis.call('HEXISTS', KEYS[1], 'co') == 0 then
  return 0
end
local now = now_ms()
local keep = ARGV[2] ~= '1' and expires > now
for i = 5, #KEYS do
  local seat = ARGV[i - 2]
  if redis.call('GET', KEYS[i]) == ARGV[1] then
    if keep then
      redis.call('PEXPIREAT', KEYS[i], expires)
      redis.call('ZADD', KEYS[2], expires, seat)
    else
      redis.call('DEL', KEYS[i])
      redis.call('ZREM', KEYS[2], seat)
      redis.call('ZREM', KEYS[3], seat)
    end
  end
end
if keep then
  redis.call('HDEL', KEYS[1], 'co')
  redis.call('PEXPIREAT', KEYS[1], expires)
  return 1
end
redis.call('DEL', KEYS[1])
return 0
