-- Deletes keys only where they still hold the caller's id: lifts an allocation change's
-- fence, gives up a claim to load an event's state, or takes back a season claim's marks
-- on its seats, without touching another's.
--
-- KEYS[1..]  fence:{<event>}, loading:{<event>}, or hold:{<event>}:<seat> of the marked
--            seats (all of one event)
-- ARGV[1]    the caller's id (for marks, 'p:' and the claim's token in the event)
--
-- Returns how many keys it deleted: for one key, 1 deleted, 0 not the caller's (lapsed,
-- or someone else's).
local deleted = 0
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[1] then
    deleted = deleted + redis.call('DEL', KEYS[i])
  end
end
return deleted
