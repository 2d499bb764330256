-- Deletes a key only if it still holds the caller's id: lifts an allocation change's
-- fence, or gives up a claim to load an event's state, without touching another's.
--
-- KEYS[1]  fence:{<event>} or loading:{<event>}
-- ARGV[1]  the caller's id
--
-- Returns 1 deleted, 0 not the caller's (lapsed, or someone else's).
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
