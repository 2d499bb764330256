-- Puts a cancelled order's seats back on sale in Redis, and drops the event's loaded
-- state and any load in progress, so the next hold reloads the sold seats from Postgres
-- (a load that read Postgres before the cancellation committed would otherwise bring
-- the seats back as sold).
--
-- KEYS[1]  sold:{<event>}
-- KEYS[2]  soldnew:{<event>}
-- KEYS[3]  sync:{<event>}
-- KEYS[4]  loading:{<event>}
-- ARGV     the seat ids
--
-- Returns 1.
for i = 1, #ARGV do
  redis.call('SREM', KEYS[1], ARGV[i])
  redis.call('SREM', KEYS[2], ARGV[i])
end
redis.call('DEL', KEYS[3], KEYS[4])
return 1
