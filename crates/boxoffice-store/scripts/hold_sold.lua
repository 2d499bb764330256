-- Finishes a checkout whose order Postgres committed: the seats become sold, so Redis
-- refuses holds on them, and the hold is gone.
--
-- KEYS[1]    holdtok:{<event>}:<token>
-- KEYS[2]    held:{<event>}
-- KEYS[3]    holduser:{<event>}:<user>
-- KEYS[4]    sold:{<event>}
-- KEYS[5]    soldnew:{<event>}           seats sold since the last load from Postgres began
-- KEYS[6..]  hold:{<event>}:<seat>       the order's seats
-- ARGV[1]    the token
-- ARGV[2]    how long `soldnew` is kept (ms): it only matters to a load in progress; also
--            the lifetime of a `sold` this script creates (the set lapsed, or the event had
--            no sale when it was loaded): longer than any loaded state that reads it, and
--            every key expires
-- ARGV[3..]  the seat ids of KEYS[6..], in the same order
--
-- Returns 1.
for i = 6, #KEYS do
  local seat = ARGV[i - 3]
  redis.call('SADD', KEYS[4], seat)
  redis.call('SADD', KEYS[5], seat)
  if redis.call('GET', KEYS[i]) == ARGV[1] then
    redis.call('DEL', KEYS[i])
    redis.call('ZREM', KEYS[2], seat)
  end
  redis.call('ZREM', KEYS[3], seat)
end
redis.call('PEXPIRE', KEYS[5], ARGV[2])
-- A set that already expires keeps its time (the loaded state's, a minute past it).
redis.call('PEXPIRE', KEYS[4], ARGV[2], 'NX')
redis.call('DEL', KEYS[1])
return 1
