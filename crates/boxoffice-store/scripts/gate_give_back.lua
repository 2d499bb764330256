-- Gives places back to a sale-day gate counter: the booking that took them failed, or a
-- booking was cancelled.
--
-- KEYS[1]  gate:{<event id>}:<area code>
-- ARGV[1]  places to give back (a positive integer)
--
-- Returns the places left afterwards, or -1 when the counter is gone: it is then rebuilt
-- from Postgres on the next booking, which already counts these places, so adding them to
-- a fresh counter would count them twice.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -1
end
return redis.call('INCRBY', KEYS[1], ARGV[1])
