-- Takes one seat out of a live hold (compare-and-delete: only if the seat's key still
-- holds this token), and frees it. The hold keeps its expiry; taking out its last seat
-- ends it as hold_release.lua does, the pass included.
--
-- KEYS[1]    holdtok:{<event>}:<token>
-- KEYS[2]    held:{<event>}
-- KEYS[3]    holduser:{<event>}:<user>
-- KEYS[4]    passend:{<event>}:<ticket>  of the pass the hold was made under, if any
-- KEYS[5]    hold:{<event>}:<seat>       the seat
-- ARGV[1]    the token
-- ARGV[2]    the user asking
-- ARGV[3]    the seat id
-- ARGV[4]    '1' if taking out the buyer's last held seat ends the pass
--
-- Returns {'kept', created ms, expires ms, the hold's seats (JSON)}; {'emptied'} the hold
-- is gone; {'emptied', 'pass_ended'} gone, and the pass ended; {'absent'} the hold has no
-- such seat; {'gone'} not live (expired, released, unknown, or being checked out); {'other'}
-- another user's hold. Nothing changes unless the answer is 'kept' or 'emptied'.
local hold = redis.call('HMGET', KEYS[1], 'u', 'c', 'x', 's', 'co', 'p', 'pe')
if not hold[1] then
  return {'gone'}
end
if hold[1] ~= ARGV[2] then
  return {'other'}
end
local now = now_ms()
if hold[5] or tonumber(hold[3]) <= now then
  return {'gone'}
end
local seats = cjson.decode(hold[4])
local kept = {}
for _, seat in ipairs(seats) do
  if seat.id ~= ARGV[3] then
    kept[#kept + 1] = seat
  end
end
if #kept == #seats then
  return {'absent'}
end
if redis.call('GET', KEYS[5]) == ARGV[1] then
  redis.call('DEL', KEYS[5])
  redis.call('ZREM', KEYS[2], ARGV[3])
end
redis.call('ZREM', KEYS[3], ARGV[3])
if #kept > 0 then
  local json = cjson.encode(kept)
  redis.call('HSET', KEYS[1], 's', json)
  return {'kept', tonumber(hold[2]), tonumber(hold[3]), json}
end
redis.call('DEL', KEYS[1])
if ARGV[4] == '1' and hold[6] then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  if redis.call('ZCARD', KEYS[3]) == 0 and tonumber(hold[7]) > now then
    redis.call('SET', KEYS[4], 1, 'PXAT', hold[7])
    return {'emptied', 'pass_ended'}
  end
end
return {'emptied'}
