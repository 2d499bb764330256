-- Lifts an allocation change's fence, if it is still this change's (compare-and-delete).
--
-- KEYS[1]  fence:{<event>}
-- ARGV[1]  the fence's id
--
-- Returns 1 lifted, 0 not this change's fence (lapsed, or another change's).
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
