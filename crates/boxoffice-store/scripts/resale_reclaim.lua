-- Takes a seat listed for resale back into its seller's order in Redis because its ticket
-- let the seller in (the door, `sales::seats`): the seat is sold again whatever hold has
-- it, so no hold can take it from now on. The hold that has it is named, for the caller
-- to end whole.
--
-- KEYS[1]    sold:{<event>}
-- KEYS[2]    soldnew:{<event>}          seats sold since the last load from Postgres began
-- KEYS[3]    hold:{<event>}:<seat>      the seat
-- ARGV[1]    how long `soldnew` is kept (ms), and the lifetime of a `sold` this creates
-- ARGV[2]    the seat id of KEYS[3]
--
-- Returns the token of the hold that has the seat, or false when none does.
redis.call('SADD', KEYS[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[1], 'NX')
return redis.call('GET', KEYS[3])
