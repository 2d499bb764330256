-- Writes the hold of a waiting-list offer: seats that came back (a cancelled order's, a
-- channel's released, a lapsed offer's) held for the buyer they are offered to, before the
-- transaction that offers them commits in Postgres. No rule of a claim applies: the seats
-- are the offer's by the waiting list's order. A seat held by any hold but `from` (the
-- lapsed offer whose seats pass on) stops it: nothing is written.
--
-- KEYS[1]    holdtok:{<event>}:<token>   the offer's hold
-- KEYS[2]    held:{<event>}
-- KEYS[3]    holduser:{<event>}:<user>   the buyer's held seats
-- KEYS[4]    holdtok:{<event>}:<from>    the lapsed offer's hold (any key of the event
--                                        when there is none)
-- KEYS[5..]  hold:{<event>}:<seat>       the seats, in seat-id order
-- ARGV[1]    the offer's token
-- ARGV[2]    the buyer
-- ARGV[3]    when the hold was made (ms)
-- ARGV[4]    when it lapses (ms)
-- ARGV[5]    the seats with their quotes (JSON)
-- ARGV[6]    the lapsed offer's token, or ''
-- ARGV[7..]  the seat ids of KEYS[5..]
--
-- Returns {'held'}; {'unavailable', seat id} a seat is another hold's; {'busy'} the lapsed
-- offer is being checked out.
-- outlive(key, at) comes from prelude.lua, prepended when the script is loaded.
for i = 5, #KEYS do
  local holder = redis.call('GET', KEYS[i])
  if holder and holder ~= ARGV[6] then
    return {'unavailable', ARGV[i + 2]}
  end
end
if ARGV[6] ~= '' and redis.call('HEXISTS', KEYS[4], 'co') == 1 then
  return {'busy'}
end
local expires = tonumber(ARGV[4])
for i = 5, #KEYS do
  redis.call('SET', KEYS[i], ARGV[1], 'PXAT', expires)
  redis.call('ZADD', KEYS[2], expires, ARGV[i + 2])
  redis.call('ZADD', KEYS[3], expires, ARGV[i + 2])
end
redis.call('HSET', KEYS[1], 'u', ARGV[2], 'c', ARGV[3], 'x', expires, 's', ARGV[5])
redis.call('PEXPIREAT', KEYS[1], expires)
outlive(KEYS[2], expires)
outlive(KEYS[3], expires)
return {'held'}
