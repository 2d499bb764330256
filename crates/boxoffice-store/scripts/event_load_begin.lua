-- Claims the right to load an event's state (layout version, start, sold seats) from
-- Postgres into Redis, so that one server loads it while the others wait.
--
-- KEYS[1]  sync:{<event>}     the loaded state
-- KEYS[2]  fence:{<event>}    present while the event's allocations change
-- KEYS[3]  loading:{<event>}  who is loading, if anyone
-- KEYS[4]  soldnew:{<event>}  seats sold since the load began (emptied here)
-- ARGV[1]  the loader's id
-- ARGV[2]  how long the claim lasts (ms), should the loader die
-- ARGV[3]  '1' to refresh a state that is still loaded (it lapses soon), else '0'
--
-- Returns 1: load now; 0: someone else is loading, or allocations are changing;
--         2: the state is loaded already (and no refresh was asked for).
if ARGV[3] ~= '1' and redis.call('EXISTS', KEYS[1]) == 1 then
  return 2
end
if redis.call('EXISTS', KEYS[2]) == 1 then
  return 0
end
if not redis.call('SET', KEYS[3], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 0
end
redis.call('DEL', KEYS[4])
return 1
