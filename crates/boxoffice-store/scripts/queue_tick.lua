-- One instance's second in one event's line: it reports how its hold path fares, and,
-- if it holds the line's lease, advances the one public counter, "admitted up to".
-- Every instance calls this about once a second for each line its buyers use; the call
-- is the whole of an instance's traffic to the line while its buyers only wait.
--
-- The counter moves at the rate in force (the event's rate times the slowest factor any
-- instance reported within 3 s, from a bucket of at most ten seconds' worth), plus one for
-- each place that lapsed (admitted and not exchanged for a pass within the session) or
-- whose pass ended early, and it steps over places given up while waiting. Each second's
-- admissions are kept as a tick ("<at>:<from>:<n>" scored by its last place) until their
-- session is over; then its places not exchanged (n less those counted) are lapsed.
--
-- KEYS[1]  queue:{<event>}:state   as in queue_join.lua
-- KEYS[2]  queue:{<event>}:ticks   "<admitted at>:<after place>:<places>" -> last place
-- KEYS[3]  queue:{<event>}:used    tick -> its places exchanged or given up
-- KEYS[4]  queue:{<event>}:gaveup  places given up while waiting -> the place
-- KEYS[5]  queue:{<event>}:health  instance -> "<factor>|<why>|<at ms>"
-- KEYS[6]  queue:{<event>}:lease   the instance advancing the counter
-- KEYS[7]  queue:{<event>}:left    ticket ids given up while waiting, in order
-- KEYS[8]  queue:{<event>}:shown   "<from ms>:<admitted up to>", newest first: each
--                                  advance of the counter is shown from a moment ARGV[10]
--                                  after it, so that every instance, having read it by
--                                  then, shows it from the same moment, and a buyer
--                                  polling one instance, then another, never sees their
--                                  place move back
-- ARGV[1]  opening time (ms)
-- ARGV[2]  admissions per minute (the event's setting)
-- ARGV[3]  how long an admission lasts (ms)
-- ARGV[4]  this instance
-- ARGV[5]  this instance's factor (0..1) for the rate, and ARGV[6] why it is below 1
-- ARGV[7]  a random seed for the opening's permutation, used if the line opens now
-- ARGV[8]  how many entries of KEYS[7] this instance has read
-- ARGV[9]  how long the keys live after the last join (ms)
-- ARGV[10] how long after an advance it is shown (ms)
--
-- Returns {seq, early (-1 before the opening), seed, up (shown now), admitting per minute,
--          why, updated at (ms), places given up still ahead, lapsed, left, ended, now,
--          the entries of KEYS[8] joined by ',', new entries of KEYS[7]...}

local state, ticks, used, gaveup = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local health, lease, left, shown = KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local delay = tonumber(ARGV[10])
local opens, rate, session = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local me = ARGV[4]
local now = clock_ms()

-- The slowest fresh report decides; stale ones (an instance gone) are forgotten.
redis.call('HSET', health, me, ARGV[5] .. '|' .. ARGV[6] .. '|' .. now)
local factor, why = 1, ''
local reports = redis.call('HGETALL', health)
for i = 1, #reports, 2 do
  local f, w, at = string.match(reports[i + 1], '^([^|]*)|([^|]*)|(%d+)$')
  if not at or now - tonumber(at) > 3000 then
    redis.call('HDEL', health, reports[i])
  elseif tonumber(f) < factor then
    factor, why = tonumber(f), w
  end
end
local admitting = math.floor(rate * factor)

local holder = redis.call('SET', lease, me, 'NX', 'PX', 2500)
if not holder and redis.call('GET', lease) == me then
  redis.call('PEXPIRE', lease, 2500)
  holder = true
end

if holder and now >= opens then
  if not redis.call('HGET', state, 'early') then
    redis.call('HSET', state, 'early', tonumber(redis.call('HGET', state, 'seq') or '0'),
      'seed', ARGV[7])
  end
  local s = redis.call('HMGET', state, 'seq', 'up', 'tokens', 't', 'skips')
  local seq, up = tonumber(s[1] or '0'), tonumber(s[2] or '0')
  local tokens, t = tonumber(s[3] or '0'), math.max(tonumber(s[4] or opens), opens)
  local skips = tonumber(s[5] or '0')
  local burst = math.max(1, admitting / 6)
  tokens = math.min(burst, tokens + math.max(0, now - t) * admitting / 60000)

  -- Seconds whose session is over: their places not exchanged have lapsed.
  local lapsed = 0
  for _, tick in ipairs(redis.call('ZRANGE', ticks, 0, 99)) do
    local at, n = string.match(tick, '^(%d+):%d+:(%d+)$')
    if now - tonumber(at) <= session then
      break
    end
    lapsed = lapsed + math.max(0, tonumber(n) - tonumber(redis.call('HGET', used, tick) or '0'))
    redis.call('ZREM', ticks, tick)
    redis.call('HDEL', used, tick)
  end
  skips = skips + lapsed

  -- Freed places first, then the rate's; places given up are stepped over.
  local free = seq - up
  local by_skips = math.min(skips, free)
  local by_tokens = math.min(math.floor(tokens), free - by_skips)
  local base = up + by_skips + by_tokens
  local to, over = base, 0
  while to < seq do
    local counted = redis.call('ZCOUNT', gaveup, '(' .. up, to)
    if counted <= over then
      break
    end
    over = counted
    to = math.min(seq, base + over)
  end
  over = redis.call('ZCOUNT', gaveup, '(' .. up, to)
  redis.call('ZREMRANGEBYSCORE', gaveup, '-inf', to)
  if to > up then
    -- Admitted from the moment the advance is shown.
    redis.call('ZADD', ticks, to, (now + delay) .. ':' .. up .. ':' .. (to - up - over))
    redis.call('LPUSH', shown, (now + delay) .. ':' .. to)
    redis.call('LTRIM', shown, 0, 15)
  end
  redis.call('HSET', state, 'up', to, 'tokens', tostring(tokens - by_tokens), 't', now,
    'skips', skips - by_skips)
  if lapsed > 0 then
    redis.call('HINCRBY', state, 'lapsed', lapsed)
  end
  redis.call('HSET', state, 'admitting', admitting, 'why', why)
  for i = 1, #KEYS do
    redis.call('PEXPIRE', KEYS[i], ARGV[9])
  end
elseif holder then
  redis.call('HSET', state, 'admitting', admitting, 'why', why)
end

local s = redis.call('HMGET', state, 'seq', 'early', 'seed', 'admitting', 'why',
  'lapsed', 'left', 'ended', 'sig', 'updated')
local history = redis.call('LRANGE', shown, 0, 15)
local up = shown_at(history, now)
local given_up = redis.call('ZCARD', gaveup)
-- When the public figures other than the counter last changed (the counter's changes are
-- dated by when they are shown), so a status is the same bytes until one does.
local sig = table.concat({now >= opens and 'open' or 'before', s[4] or admitting,
  s[5] or why, s[1] or '0', given_up}, '|')
local updated = tonumber(s[10] or '0')
if sig ~= s[9] then
  updated = now
  redis.call('HSET', state, 'sig', sig, 'updated', now)
end
local reply = {tonumber(s[1] or '0'), tonumber(s[2] or '-1'), s[3] or '0', up,
  tonumber(s[4] or admitting), s[5] or why, updated, given_up, tonumber(s[6] or '0'),
  tonumber(s[7] or '0'), tonumber(s[8] or '0'), now, table.concat(history, ',')}
for _, id in ipairs(redis.call('LRANGE', left, tonumber(ARGV[8]), tonumber(ARGV[8]) + 9999)) do
  reply[#reply + 1] = id
end
return reply
