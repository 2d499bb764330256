-- Prepended to the waiting room's scripts (queue_join, queue_tick, queue_exchange,
-- queue_leave) when they are loaded, so each rule of the line lives in one place.

-- Redis' clock, in ms: the one clock every instance's calls share.
local function clock_ms()
  local clock = redis.call('TIME')
  return tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
end

-- The counter as shown at `now`, from `history` (entries "<from ms>:<admitted up to>",
-- newest first, the LRANGE of queue:{<event>}:shown): the newest value shown by then.
local function shown_at(history, now)
  for _, entry in ipairs(history) do
    local from, value = string.match(entry, '^(%d+):(%d+)$')
    if tonumber(from) <= now then
      return tonumber(value)
    end
  end
  return 0
end
