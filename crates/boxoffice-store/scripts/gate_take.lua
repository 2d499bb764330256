-- Takes places from a general-admission area's sale-day gate counter, atomically.
--
-- KEYS[1]  gate:{<event id>}:<area code>  the places the gate believes are left
-- ARGV[1]  places wanted (a positive integer)
--
-- Returns {1, left afterwards} when the places were taken,
--         {0, left}            when fewer than wanted remain (nothing taken),
--         {-1, 0}              when the counter does not exist yet (or was lost) and must
--                              be initialised from Postgres first.
local left = redis.call('GET', KEYS[1])
if not left then
  return {-1, 0}
end
left = tonumber(left)
local want = tonumber(ARGV[1])
if left < want then
  return {0, left}
end
return {1, redis.call('DECRBY', KEYS[1], want)}
