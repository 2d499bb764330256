-- Holds a whole basket of seats under one new token, or none of them: every seat is
-- checked before any is set, inside one script, so no other client can interleave.
-- A season's claim runs it twice in each event it covers (src/redis/holds/season.rs):
-- first to mark the seats for a moment ('prepare'), then, once every event is marked, to
-- hold them, its own marks counting as free.
--
-- KEYS[1]    sync:{<event>}              the event's state as loaded from Postgres: layout
--                                        version `v`, start time `s` (ms), time `r` (ms)
--                                        after which it should be refreshed
-- KEYS[2]    fence:{<event>}             present while the event's allocations change
--                                        (`sync` is absent meanwhile, so it is only read
--                                        when `sync` is)
-- KEYS[3]    sold:{<event>}              the event's sold seats
-- KEYS[4]    held:{<event>}              live holds: seat id -> expiry (ms)
-- KEYS[5]    holduser:{<event>}:<user>   this user's held seats: seat id -> expiry (ms)
-- KEYS[6]    holdtok:{<event>}:<token>   the new hold: user `u`, created `c` and expiry `x`
--                                        (ms), seats with their quotes `s` (JSON)
-- KEYS[7]    holdrate:{<event>}:<user>   the user's hold rate: when their next request
--                                        would arrive if they kept to the rate (ms)
-- KEYS[8]    passend:{<event>}:<ticket>  present once the pass the hold is asked under
--                                        has ended (without a pass: never written)
-- KEYS[9..]  hold:{<event>}:<seat>       one per seat of the basket, in seat-id order;
--                                        a live hold's key holds its token
-- ARGV[1]    the new token
-- ARGV[2]    the user id
-- ARGV[3]    time to live (ms): of the hold, or of the marks when preparing
-- ARGV[4]    the event's limit of live held seats per user
-- ARGV[5]    the layout version the seats were quoted from
-- ARGV[6]    the seats with their ticket types and prices (JSON), kept with the hold
-- ARGV[7]    the user's hold rate: milliseconds of a minute one request uses (60000 /
--            holds a minute), or 0 for no limit
-- ARGV[8]    how many holds the user may ask for at once (a minute's worth)
-- ARGV[9]    the waiting-room ticket of the pass the hold is asked under, or ''
-- ARGV[10]   when that pass expires (ms), or 0
-- ARGV[11]   a season claim's mark in this event ('p:' and the token), or '' for a hold
--            of this event alone
-- ARGV[12]   '' for a hold of this event alone; 'prepare' to check the basket as a hold
--            is checked and then only mark its seats; for a season claim's hold, how many
--            events the claim holds seats in (kept with the hold as `n`)
-- ARGV[13..] per seat of KEYS[9..], two values: its id, then '1' if that layout version
--            has it on sale, else '0'
--
-- Returns {'held', created ms, expires ms, 1 if the loaded state is due for a refresh
--                                          else 0}
-- (the refusals spelled as the postgres claim spells them: sql/claim.sql)
--         {'unavailable', seat id, ...}
--                                  naming every seat held by someone, sold or not on sale
--         {'rate', ms}             the user asks for holds faster than the rate; ms until
--                                  the next ask would be allowed
--         {'limit'}                the user's live held seats plus these exceed the limit
--         {'pass_ended'}           the pass has ended (its buyer checked out or released
--                                  every hold): in this script, so a checkout that ends it
--                                  (hold_checkout.lua) comes either before this hold (which
--                                  is refused) or after it (this hold counted the checked-out
--                                  seats against the limit)
--         {'started'}              the event has started
--         {'stale', version}       the allocations changed since the seats were quoted
--         {'load'}                 the event's state must first be loaded from Postgres
--                                  (never loaded, due for a refresh, or lost with Redis' data)
--         {'busy'}                 the event's allocations are changing, or another
--                                  season claim has marked one of the seats; try again
--                                  shortly
--         {'prepared'}             (when preparing) the seats are marked, nothing else
-- No hold is written unless the answer is 'held'. Two writes come before the answer is
-- known, and stand whatever it is: the rate key counts every ask the event's state lets
-- through ('unavailable' and 'limit' too, as the server's own limiter does), and the user's
-- index drops entries that have lapsed (they count for nothing either way). The index
-- keys (held, user) expire with their latest hold, and the rate key once the user is back
-- to a full minute's worth, so nothing outlives a sale.

-- event_state(...), now_ms(), outlive(key, at), claim_refusal(...) and
-- marked_by_other(...) come from prelude.lua, prepended when the script is loaded.
local sync, refused = event_state(KEYS[1], KEYS[2], ARGV[5], 'r')
if refused then
  return refused
end
local now = now_ms()
if now >= tonumber(sync[2]) then
  return {'started'}
end

-- The hold rate (take_rate, as scripts/rate_limit.lua counts every other limit): here,
-- in the hold's own round trip, so limiting costs Redis no extra call. Then the pass and
-- the buyer's limit.
local count = #KEYS - 8
local holders = {}
for i = 1, count do
  holders[i] = redis.call('GET', KEYS[8 + i])
  if marked_by_other(holders[i], ARGV[11]) then
    return {'busy'}
  end
end
local refused = claim_refusal(KEYS[7], tonumber(ARGV[7]), tonumber(ARGV[8]), ARGV[9], KEYS[8],
                              KEYS[5], count, tonumber(ARGV[4]), now)
if refused then
  return refused
end

local taken = {'unavailable'}
for i = 1, count do
  local seat = ARGV[11 + 2 * i]
  if ARGV[12 + 2 * i] ~= '1'
      or redis.call('SISMEMBER', KEYS[3], seat) == 1
      or (holders[i] and holders[i] ~= ARGV[11]) then
    taken[#taken + 1] = seat
  end
end
if #taken > 1 then
  return taken
end
if ARGV[12] == 'prepare' then
  for i = 1, count do
    redis.call('SET', KEYS[8 + i], ARGV[11], 'PX', ARGV[3])
  end
  return {'prepared'}
end

local expires = now + tonumber(ARGV[3])
for i = 1, count do
  local seat = ARGV[11 + 2 * i]
  redis.call('SET', KEYS[8 + i], ARGV[1], 'PXAT', expires)
  redis.call('ZADD', KEYS[4], expires, seat)
  redis.call('ZADD', KEYS[5], expires, seat)
end
redis.call('HSET', KEYS[6], 'u', ARGV[2], 'c', now, 'x', expires, 's', ARGV[6])
if ARGV[9] ~= '' then
  redis.call('HSET', KEYS[6], 'p', ARGV[9], 'pe', ARGV[10])
end
if ARGV[12] ~= '' then
  redis.call('HSET', KEYS[6], 'n', ARGV[12])
end
redis.call('PEXPIREAT', KEYS[6], expires)
outlive(KEYS[4], expires)
outlive(KEYS[5], expires)
-- Holds that lapsed stay in the index until swept here; readers skip them by score.
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
local refresh = 0
if not sync[3] or now >= tonumber(sync[3]) then
  refresh = 1
end
return {'held', now, expires, refresh}
