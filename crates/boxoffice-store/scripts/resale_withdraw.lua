-- Takes seats listed for resale back into their seller's order in Redis, unless a hold
-- has one of them: the seats are sold again, as a checkout marks them (hold_sold.lua).
-- Redis runs one script at a time, so of this and a hold of a seat at once (which sets
-- the seat's key), exactly one wins.
--
-- KEYS[1]    sold:{<event>}
-- KEYS[2]    soldnew:{<event>}          seats sold since the last load from Postgres began
-- KEYS[3..]  hold:{<event>}:<seat>      the seats
-- ARGV[1]    how long `soldnew` is kept (ms), and the lifetime of a `sold` this creates
-- ARGV[2..]  the seat ids of KEYS[3..], in the same order
--
-- Returns 1, or 0 when a hold has one of the seats (nothing changed).
for i = 3, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    return 0
  end
end
for i = 3, #KEYS do
  redis.call('SADD', KEYS[1], ARGV[i - 1])
  redis.call('SADD', KEYS[2], ARGV[i - 1])
end
redis.call('PEXPIRE', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[1], 'NX')
return 1
