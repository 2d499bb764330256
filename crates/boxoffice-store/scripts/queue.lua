-- The waiting room of one event: join (one ticket per user) and poll, each of which also
-- admits whoever's turn it is by now. Admission is a token bucket refilled at the event's
-- rate from Redis' clock, advanced by whichever call comes first on whichever instance,
-- never by a timer per user.
--
-- KEYS[1]  queue:{<event>}:line      waiting tickets -> place (lowest first): a random
--                                    number below 2^52 for those who joined before opening
--                                    (a random order, drawn when they joined), 2^52 plus
--                                    their arrival number for those who joined after
-- KEYS[2]  queue:{<event>}:polls     waiting tickets -> when they last polled (ms)
-- KEYS[3]  queue:{<event>}:owners    ticket -> user
-- KEYS[4]  queue:{<event>}:users     user -> their current ticket
-- KEYS[5]  queue:{<event>}:admitted  admitted tickets -> their admission number (1, 2, ...)
-- KEYS[6]  queue:{<event>}:since     admitted tickets -> when they were admitted (ms)
-- KEYS[7]  queue:{<event>}:bucket    tokens, t (ms of the last refill), seq (arrivals
--                                    after opening), admitted and dropped (counts)
-- ARGV[1]  'join', 'poll' or 'end' (the user is done: their admission ends early and its
--          slot goes to the next in line)
-- ARGV[2]  opening time (ms)
-- ARGV[3]  admissions per minute
-- ARGV[4]  a waiting ticket not polled for this long (ms) is dropped when its turn comes
-- ARGV[5]  how long an admission lasts (ms): after it, joining again gives a new ticket
-- ARGV[6]  the user
-- ARGV[7]  join: the ticket to give if the user has none; poll: the user's ticket;
--          end: unused
-- ARGV[8]  join: a random number below 2^52 (a cryptographically random draw), the
--          ticket's place if it joins before opening; -1 to keep joiners before opening
--          in the order they joined (no shuffle)
-- ARGV[9]  most tickets one call may admit or drop
-- ARGV[10] how long the keys live after the last join (ms)
--
-- Returns {'waiting', ticket, people ahead (-1 before opening), now}
--         {'admitted', ticket, admitted at (ms), now}
--         {'ended', ticket, admitted at (ms), now}  end: the user's admission, now over
--         {'gone'}  poll: no such ticket of this user (never issued, dropped, ended,
--                   replaced by a newer one, or admitted for longer than the session),
--                   join again; end: the user has no admission
--                   running

local line, polls, owners, users = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local admitted, since, bucket = KEYS[5], KEYS[6], KEYS[7]
local opens, rate = tonumber(ARGV[2]), tonumber(ARGV[3])
local drop_after, session = tonumber(ARGV[4]), tonumber(ARGV[5])
local user, ticket = ARGV[6], ARGV[7]
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local AFTER_OPENING = 4503599627370496 -- 2^52

-- Forgets a ticket that will not be admitted.
local function forget(t)
  redis.call('ZREM', line, t)
  redis.call('ZREM', polls, t)
  local owner = redis.call('HGET', owners, t)
  if owner and redis.call('HGET', users, owner) == t then
    redis.call('HDEL', users, owner)
  end
  redis.call('HDEL', owners, t)
end

-- Admits as many tickets from the front as the bucket holds tokens for; a ticket whose
-- holder stopped polling is dropped and costs no token.
local function advance()
  if now < opens or rate <= 0 then
    return
  end
  local state = redis.call('HMGET', bucket, 'tokens', 't')
  local tokens = tonumber(state[1]) or 0
  local t = math.max(tonumber(state[2]) or opens, opens)
  -- At most ten seconds' worth at once, so a quiet spell is no flood after it.
  local burst = math.max(1, rate / 6)
  tokens = math.min(burst, tokens + math.max(0, now - t) * rate / 60000)
  local steps = 0
  while tokens >= 1 and steps < tonumber(ARGV[9]) do
    local head = redis.call('ZRANGE', line, 0, 0)[1]
    if not head then
      break
    end
    steps = steps + 1
    local seen = tonumber(redis.call('ZSCORE', polls, head))
    if seen and now - seen <= drop_after then
      redis.call('ZREM', line, head)
      redis.call('ZREM', polls, head)
      redis.call('ZADD', admitted, redis.call('HINCRBY', bucket, 'admitted', 1), head)
      redis.call('HSET', since, head, now)
      tokens = tokens - 1
    else
      forget(head)
      redis.call('HINCRBY', bucket, 'dropped', 1)
    end
  end
  redis.call('HSET', bucket, 'tokens', tostring(tokens), 't', now)
end

if ARGV[1] == 'end' then
  local current = redis.call('HGET', users, user)
  local at = current and tonumber(redis.call('HGET', since, current))
  if not at or now - at > session then
    return {'gone'}
  end
  redis.call('HDEL', users, user)
  redis.call('HDEL', owners, current)
  redis.call('ZREM', admitted, current)
  redis.call('HDEL', since, current)
  redis.call('HINCRBY', bucket, 'ended', 1)
  -- The slot is handed on: one more token for the front of the line.
  advance()
  if now >= opens and rate > 0 then
    redis.call('HINCRBYFLOAT', bucket, 'tokens', 1)
    advance()
  end
  return {'ended', current, at, now}
end

if ARGV[1] == 'join' then
  local current = redis.call('HGET', users, user)
  if current then
    local at = tonumber(redis.call('HGET', since, current))
    if at and now - at > session then
      current = nil -- that admission is over: back of the line
    end
  end
  if current then
    ticket = current
  else
    local place
    local draw = tonumber(ARGV[8])
    if now < opens and draw >= 0 then
      place = draw
    else
      -- Arrival order, behind every random place (and, unshuffled, behind nobody).
      place = AFTER_OPENING + redis.call('HINCRBY', bucket, 'seq', 1)
    end
    redis.call('ZADD', line, place, ticket)
    redis.call('HSET', owners, ticket, user)
    redis.call('HSET', users, user, ticket)
  end
  for i = 1, #KEYS do
    redis.call('PEXPIRE', KEYS[i], ARGV[10])
  end
elseif redis.call('HGET', owners, ticket) ~= user then
  return {'gone'}
end

if redis.call('ZSCORE', line, ticket) then
  redis.call('ZADD', polls, now, ticket)
end
advance()
local at = redis.call('HGET', since, ticket)
if at then
  -- An admission whose session is over gives no pass: the buyer joins again.
  if now - tonumber(at) > session then
    return {'gone'}
  end
  return {'admitted', ticket, tonumber(at), now}
end
if not redis.call('ZSCORE', line, ticket) then
  return {'gone'}
end
if now < opens then
  return {'waiting', ticket, -1, now}
end
return {'waiting', ticket, redis.call('ZRANK', line, ticket), now}
