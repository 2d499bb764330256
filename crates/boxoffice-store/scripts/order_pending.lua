-- A pending order's seats (an event with a payment window): the keys of the hold it was
-- checked out from, kept for the order until its deadline, then sold or let lapse.
--
-- KEYS[1]    held:{<event>}
-- KEYS[2]    holduser:{<event>}:<user>
-- KEYS[3]    holdtok:{<event>}:<token>   the hold the order was checked out from
-- KEYS[4..]  hold:{<event>}:<seat>       the order's seats
-- ARGV[1]    the hold's token (the seats' keys hold it)
-- ARGV[2]    what to do: 'keep', 'pay', 'restore' or 'free'
-- ARGV[3]    the order's deadline, pay_by (ms, Postgres' clock)
-- ARGV[4]    for 'pay': how long to protect the seats (ms)
-- ARGV[5..]  the seat ids of KEYS[4..], in the same order
--
-- 'keep': the checkout committed the pending order. Every key still holding the token
--   lapses at pay_by, in the indexes too (the seats count against the buyer's limit until
--   then), and the hold is gone: its token reaches nothing more. Returns 1.
-- 'pay': a payment begins. If Redis' clock is before pay_by and every key still holds the
--   token, protects them while Postgres commits the sale (as a checkout does) and returns
--   1; else returns 0 and changes nothing: the deadline passed, and a seat may be someone
--   else's already. In one script, so a hold taking a lapsed seat comes before (and the
--   payment is refused) or after (and finds the seat protected).
-- 'restore': the payment did not commit; the keys still holding the token lapse at pay_by
--   again. Returns 1.
-- 'free': the pending order was cancelled; every key still holding the token goes.
--   Returns 1.
-- outlive(key, at) comes from prelude.lua, prepended when the script is loaded.
local mode = ARGV[2]
local pay_by = tonumber(ARGV[3])
if mode == 'pay' then
  local clock = redis.call('TIME')
  local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
  if now >= pay_by then
    return 0
  end
  for i = 4, #KEYS do
    if redis.call('GET', KEYS[i]) ~= ARGV[1] then
      return 0
    end
  end
  local protected = math.max(pay_by, now + tonumber(ARGV[4]))
  for i = 4, #KEYS do
    redis.call('PEXPIREAT', KEYS[i], protected)
    redis.call('ZADD', KEYS[1], protected, ARGV[i + 1])
  end
  outlive(KEYS[1], protected)
  return 1
end
for i = 4, #KEYS do
  local seat = ARGV[i + 1]
  if redis.call('GET', KEYS[i]) == ARGV[1] then
    if mode == 'free' then
      redis.call('DEL', KEYS[i])
      redis.call('ZREM', KEYS[1], seat)
      redis.call('ZREM', KEYS[2], seat)
    else
      redis.call('PEXPIREAT', KEYS[i], pay_by)
      redis.call('ZADD', KEYS[1], pay_by, seat)
      redis.call('ZADD', KEYS[2], pay_by, seat)
    end
  end
end
if mode == 'keep' then
  redis.call('DEL', KEYS[3])
  outlive(KEYS[1], pay_by)
  outlive(KEYS[2], pay_by)
end
return 1
