-- Exchanges an admitted ticket for its pass: the first exchange records when the ticket
-- was admitted (the second of its tick), which the pass is derived from; later ones find
-- the same. A ticket whose session passed before any exchange has lapsed.
--
-- KEYS[1]  queue:{<event>}:state, KEYS[2] users, KEYS[3] passes, KEYS[4] ticks,
-- KEYS[5]  used (as in queue_join.lua and queue_tick.lua)
-- ARGV[1]  the user, ARGV[2] the ticket id, ARGV[3] the ticket's place
-- ARGV[4]  how long an admission lasts (ms)
--
-- Returns {'pass', admitted at (ms)}, {'waiting'} (its place is not reached yet) or
--         {'gone'} (given up, lapsed, ended, or replaced by a newer ticket)

local state, users, passes, ticks, used = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local user, id, place, session = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local now = clock_ms()

local record = redis.call('HGET', users, user)
if not record or string.match(record, '^([^|]+)') ~= id then
  return {'gone'}
end
local at = redis.call('HGET', passes, id)
if at then
  return {'pass', tonumber(at)}
end
if place > tonumber(redis.call('HGET', state, 'up') or '0') then
  return {'waiting'}
end
local tick = redis.call('ZRANGEBYSCORE', ticks, place, '+inf', 'LIMIT', 0, 1)[1]
local admitted, after = nil, nil
if tick then
  admitted, after = string.match(tick, '^(%d+):(%d+):')
  if tonumber(after) < place and tonumber(admitted) > now then
    -- Advanced, not shown yet.
    return {'waiting'}
  end
end
if not tick or tonumber(after) >= place or now - tonumber(admitted) > session then
  -- Lapsed: joining again queues anew.
  redis.call('HDEL', users, user)
  return {'gone'}
end
redis.call('HSET', passes, id, admitted)
redis.call('HINCRBY', used, tick, 1)
return {'pass', tonumber(admitted)}
