-- Joins a user to one event's line, or finds the ticket they already have.
--
-- The line keeps no entry per waiting place: a user's record (their ticket's id, join
-- number and join time) and one counter of joins. A ticket's place follows from its join
-- number: arrival order after the opening, and for those who joined before it a keyed
-- permutation of their join numbers whose seed is drawn once, at the opening (the
-- service computes it; see the module `boxoffice_store::redis::queue`).
--
-- KEYS[1]  queue:{<event>}:state   seq (joins), early (joins before the opening, set at
--                                  it), seed, up (admitted up to), tokens, t, skips,
--                                  lapsed, left, ended, updated, sig, admitting, why
-- KEYS[2]  queue:{<event>}:users   user -> "<ticket id>|<join number>|<joined at ms>"
-- KEYS[3]  queue:{<event>}:passes  ticket id -> admitted at (ms): tickets exchanged
-- KEYS[4]  queue:{<event>}:shown   the counter's advances and when each is shown (see
--                                  queue_tick.lua)
-- ARGV[1]  opening time (ms)
-- ARGV[2]  the user
-- ARGV[3]  a new ticket id, used if the user has no ticket
-- ARGV[4]  a random seed for the opening's permutation, used if the line opens now
-- ARGV[5]  how long an admission lasts (ms): after it, joining again gives a new ticket
-- ARGV[6]  how long the keys live after the last join (ms)
-- ARGV[7]  '' or the id of the user's ticket to replace (the service found it lapsed)
--
-- Returns {ticket id, join number, joined at (ms), early (-1 before the opening), seed,
--          admitted up to (as shown now), admitted at (ms, -1 if not exchanged), now (ms)}

local state, users, passes, shown = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local opens, user = tonumber(ARGV[1]), ARGV[2]
local now = clock_ms()

-- The first call at or after the opening fixes who joined before it, and the seed.
if now >= opens and not redis.call('HGET', state, 'early') then
  redis.call('HSET', state, 'early', tonumber(redis.call('HGET', state, 'seq') or '0'),
    'seed', ARGV[4])
end

local record = redis.call('HGET', users, user)
if record then
  local id = string.match(record, '^([^|]+)')
  local at = tonumber(redis.call('HGET', passes, id))
  if id == ARGV[7] or (at and now - at > tonumber(ARGV[5])) then
    -- Lapsed, or admitted and its session over: the back of the line.
    redis.call('HDEL', passes, id)
    record = nil
  end
end
if not record then
  local seq = redis.call('HINCRBY', state, 'seq', 1)
  record = ARGV[3] .. '|' .. seq .. '|' .. now
  redis.call('HSET', users, user, record)
end
for i = 1, 3 do
  redis.call('PEXPIRE', KEYS[i], ARGV[6])
end
local up = shown_at(redis.call('LRANGE', shown, 0, 15), now)

local id, join, joined = string.match(record, '^([^|]+)|(%d+)|(%d+)$')
local s = redis.call('HMGET', state, 'early', 'seed')
local at = redis.call('HGET', passes, id)
return {id, tonumber(join), tonumber(joined), tonumber(s[1] or '-1'), s[2] or '0', up,
  tonumber(at or '-1'), now}
