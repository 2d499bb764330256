-- Installs an event's state read from Postgres: the sold seats staged by the loader,
-- plus those sold while it read (a checkout adds to `soldnew` after its commit), the
-- layout version and the start time. Does nothing if the claim was lost meanwhile (an
-- allocation change or a cancellation invalidates a load in progress).
--
-- KEYS[1]  loading:{<event>}         who is loading
-- KEYS[2]  soldstage:{<event>}:<id>  the sold seats Postgres gave the loader
-- KEYS[3]  soldnew:{<event>}
-- KEYS[4]  sold:{<event>}
-- KEYS[5]  sync:{<event>}
-- ARGV[1]  the loader's id
-- ARGV[2]  the layout version
-- ARGV[3]  the event's start (ms)
-- ARGV[4]  how long the state is trusted before it is loaded again (ms); the sold seats
--          are kept a minute longer, so they never lapse before the state that needs them
-- ARGV[5]  how long before the state lapses a hold should refresh it (ms)
--
-- Returns 1 installed; 0 the claim was lost, nothing installed.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  redis.call('DEL', KEYS[2])
  return 0
end
redis.call('SUNIONSTORE', KEYS[4], KEYS[2], KEYS[3])
redis.call('DEL', KEYS[2], KEYS[1])
local now = now_ms()
redis.call('HSET', KEYS[5], 'v', ARGV[2], 's', ARGV[3],
  'r', now + tonumber(ARGV[4]) - tonumber(ARGV[5]))
redis.call('PEXPIRE', KEYS[5], ARGV[4])
redis.call('PEXPIRE', KEYS[4], tonumber(ARGV[4]) + 60000)
return 1
