-- A user gives up their ticket (ARGV[3] 'leave'), or their admission ends early because
-- they checked out or released every hold ('end'). Either way the user's record goes, so
-- the ticket answers "gone" from now on and joining again queues anew.
--
-- leave: a place still waiting is stepped over when the counter reaches it, and its
--        ticket id is listed for every instance (KEYS[7]), which answer its polls from
--        memory; a place admitted but not exchanged is freed at once (one more for the
--        counter); an exchanged one as 'end'.
-- end:   only an exchanged ticket (a pass) ends; its place is freed at once.
--
-- KEYS[1] state, KEYS[2] users, KEYS[3] passes, KEYS[4] ticks, KEYS[5] used,
-- KEYS[6] gaveup, KEYS[7] left (as in queue_join.lua and queue_tick.lua)
-- ARGV[1] the user, ARGV[2] the ticket id ('' for end: the user's ticket),
-- ARGV[3] 'leave' or 'end', ARGV[4] leave: the ticket's place (-1 before the opening)
--
-- Returns 'left', 'ended' or 'gone' (no such ticket of this user, or for end, no pass)

local state, users, passes, ticks, used = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local gaveup, left = KEYS[6], KEYS[7]
local user, mode = ARGV[1], ARGV[3]

local record = redis.call('HGET', users, user)
if not record then
  return 'gone'
end
local id = string.match(record, '^([^|]+)')
if mode == 'leave' and id ~= ARGV[2] then
  return 'gone'
end
local exchanged = redis.call('HGET', passes, id)
if mode == 'end' and not exchanged then
  return 'gone'
end
redis.call('HDEL', users, user)
if exchanged then
  redis.call('HDEL', passes, id)
  redis.call('HINCRBY', state, 'skips', 1)
  redis.call('HINCRBY', state, 'ended', 1)
  return 'ended'
end
local place = tonumber(ARGV[4])
if place < 0 then
  -- Before the opening a ticket has no place yet: it is admitted in its turn and lapses.
elseif place <= tonumber(redis.call('HGET', state, 'up') or '0') then
  local tick = redis.call('ZRANGEBYSCORE', ticks, place, '+inf', 'LIMIT', 0, 1)[1]
  local after = tick and tonumber(string.match(tick, '^%d+:(%d+):'))
  if tick and after < place then
    redis.call('HINCRBY', used, tick, 1)
    redis.call('HINCRBY', state, 'skips', 1)
  end
else
  redis.call('ZADD', gaveup, place, place)
end
redis.call('RPUSH', left, id)
redis.call('HINCRBY', state, 'left', 1)
return 'left'
