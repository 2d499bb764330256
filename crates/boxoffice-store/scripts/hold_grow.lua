-- Adds seats to a live hold, under its own token and expiry, all or nothing: by the rules
-- of hold_acquire.lua (the loaded state, the start, the hold rate, the pass, the buyer's
-- limit counting every seat they hold, this hold's included, and every seat checked
-- before any is set), inside one script. Seats the hold has already are left as they are.
--
-- KEYS[1]    sync:{<event>}
-- KEYS[2]    fence:{<event>}
-- KEYS[3]    sold:{<event>}
-- KEYS[4]    held:{<event>}
-- KEYS[5]    holduser:{<event>}:<user>
-- KEYS[6]    holdtok:{<event>}:<token>   the hold to grow
-- KEYS[7]    holdrate:{<event>}:<user>
-- KEYS[8]    passend:{<event>}:<ticket>  of the pass the seats are asked under
-- KEYS[9..]  hold:{<event>}:<seat>       one per seat to add, in seat-id order
-- ARGV[1]    the token
-- ARGV[2]    the user id
-- ARGV[3]    the event's limit of live held seats per user
-- ARGV[4]    the layout version the seats were quoted from
-- ARGV[5]    the hold rate's interval (ms), or 0 for no limit (as hold_acquire.lua)
-- ARGV[6]    how many holds the user may ask for at once
-- ARGV[7]    the waiting-room ticket of the pass, or ''
-- ARGV[8..]  per seat of KEYS[9..], four values: its id, '1' if that layout version has
--            it on sale else '0', its ticket type, its price (cents)
--
-- Returns {'held', created ms, expires ms, the hold's seats (JSON)} and every answer of
-- hold_acquire.lua but 'held', or {'gone'} (not live: expired, released, unknown, or
-- being checked out) or {'other'} (another user's hold). Nothing is written unless the
-- answer is 'held', but for the rate key and the user's lapsed entries, as there.
-- event_state(...), now_ms(), claim_refusal(...) and marked_by_other(...) come from
-- prelude.lua.
local sync, refused = event_state(KEYS[1], KEYS[2], ARGV[4])
if refused then
  return refused
end
local hold = redis.call('HMGET', KEYS[6], 'u', 'c', 'x', 's', 'co')
if not hold[1] then
  return {'gone'}
end
if hold[1] ~= ARGV[2] then
  return {'other'}
end
local now = now_ms()
local expires = tonumber(hold[3])
if hold[5] or expires <= now then
  return {'gone'}
end
if now >= tonumber(sync[2]) then
  return {'started'}
end

-- The seats to add: those the hold has not already.
local adding = {}
for i = 1, #KEYS - 8 do
  local holder = redis.call('GET', KEYS[8 + i])
  if marked_by_other(holder, '') then
    return {'busy'}
  end
  if holder ~= ARGV[1] then
    adding[#adding + 1] = i
  end
end
local refused = claim_refusal(KEYS[7], tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7], KEYS[8],
                              KEYS[5], #adding, tonumber(ARGV[3]), now)
if refused then
  return refused
end

local taken = {'unavailable'}
for _, i in ipairs(adding) do
  local seat = ARGV[4 + 4 * i]
  if ARGV[5 + 4 * i] ~= '1'
      or redis.call('SISMEMBER', KEYS[3], seat) == 1
      or redis.call('EXISTS', KEYS[8 + i]) == 1 then
    taken[#taken + 1] = seat
  end
end
if #taken > 1 then
  return taken
end

local seats = cjson.decode(hold[4])
for _, i in ipairs(adding) do
  local seat = ARGV[4 + 4 * i]
  redis.call('SET', KEYS[8 + i], ARGV[1], 'PXAT', expires)
  redis.call('ZADD', KEYS[4], expires, seat)
  redis.call('ZADD', KEYS[5], expires, seat)
  seats[#seats + 1] = {id = seat, t = ARGV[6 + 4 * i], p = tonumber(ARGV[7 + 4 * i])}
end
table.sort(seats, function(a, b) return a.id < b.id end)
local json = cjson.encode(seats)
redis.call('HSET', KEYS[6], 's', json)
return {'held', tonumber(hold[2]), expires, json}
