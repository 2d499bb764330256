-- A pending order's seats (an event with a payment window): the keys of the hold it was
-- checked out from, kept for the order until its deadline, then sold or let lapse.
--
-- KEYS[1]    held:{<event>}
-- KEYS[2]    holduser:{<event>}:<user>
-- KEYS[3]    holdtok:{<event>}:<token>   the hold the order was checked out from
-- KEYS[4]    sold:{<event>}
-- KEYS[5]    soldnew:{<event>}
-- KEYS[6]    sync:{<event>}              the event's state loaded from Postgres
-- KEYS[7]    loading:{<event>}
-- KEYS[8..]  hold:{<event>}:<seat>       the order's seats
-- ARGV[1]    the hold's token (the seats' keys hold it)
-- ARGV[2]    what to do: 'keep', 'pay', 'restore' or 'free'
-- ARGV[3]    the order's deadline, pay_by (ms, Postgres' clock)
-- ARGV[4]    for 'pay': how long to protect the seats (ms); for 'keep' and 'restore':
--            until when the seats are the order's (ms): pay_by, or later while the
--            waiting list is offered them
-- ARGV[5..]  the seat ids of KEYS[8..], in the same order
--
-- Postgres has the pending order, and its seats are the order's there whatever Redis
-- lost: a seat key that is gone before pay_by (Redis restarted empty, or failed over to a
-- replica that never had it) is the order's again, never a free seat. Meanwhile nobody
-- else takes it: the event's state loaded again from Postgres after such a loss has the
-- order's seats in `sold`, as every live order's.
--
-- 'keep': the checkout committed the pending order, or the seats are kept past pay_by
--   for the waiting list. Every key still holding the token (or gone before pay_by) holds
--   it until ARGV[4], in the indexes too (the seats count against the buyer's limit until
--   then), and the hold is gone: its token reaches nothing more. Returns 1.
-- 'pay': a payment begins. If Redis' clock is before pay_by, protects every seat for the
--   token while Postgres commits the sale (as a checkout does) and returns 1; else returns
--   0 and changes nothing: the deadline passed, and a seat may be someone else's already.
--   Before pay_by a key holds another token only if Redis lost the order's (and a hold
--   made then can never be checked out: Postgres refuses a second order of the seat), so
--   the key is taken back. In one script, so a hold taking a lapsed seat comes before
--   (and the payment is refused) or after (and finds the seat protected).
-- 'restore': the payment did not commit; as 'keep', without touching the hold.
-- 'free': the pending order was cancelled or lapsed; every key still holding the token
--   goes, and a seat whose key is gone leaves `sold` (where a load after a loss put it)
--   with the loaded state dropped, as after a cancellation (event_unsell.lua): the next
--   hold loads the event from Postgres again. Returns 1.
-- outlive(key, at) comes from prelude.lua, prepended when the script is loaded.
local FIRST = 8
local token, mode, pay_by = ARGV[1], ARGV[2], tonumber(ARGV[3])
local now = now_ms()
local function seat_of(i)
  return ARGV[i - 3]
end
if mode == 'pay' then
  if now >= pay_by then
    return 0
  end
  local protected = math.max(pay_by, now + tonumber(ARGV[4]))
  for i = FIRST, #KEYS do
    redis.call('SET', KEYS[i], token, 'PXAT', protected)
    redis.call('ZADD', KEYS[1], protected, seat_of(i))
  end
  outlive(KEYS[1], protected)
  return 1
end
local kept_until = tonumber(ARGV[4])
local unsold = false
for i = FIRST, #KEYS do
  local seat = seat_of(i)
  local holder = redis.call('GET', KEYS[i])
  if mode == 'free' then
    if holder == token then
      redis.call('DEL', KEYS[i])
      redis.call('ZREM', KEYS[1], seat)
      redis.call('ZREM', KEYS[2], seat)
    elseif not holder and redis.call('SREM', KEYS[4], seat) == 1 then
      redis.call('SREM', KEYS[5], seat)
      unsold = true
    end
  elseif holder == token or (not holder and now < pay_by) then
    redis.call('SET', KEYS[i], token, 'PXAT', kept_until)
    redis.call('ZADD', KEYS[1], kept_until, seat)
    redis.call('ZADD', KEYS[2], kept_until, seat)
  end
end
if unsold then
  redis.call('DEL', KEYS[6], KEYS[7])
end
if mode == 'keep' then
  redis.call('DEL', KEYS[3])
end
if mode ~= 'free' then
  outlive(KEYS[1], kept_until)
  outlive(KEYS[2], kept_until)
end
return 1
