-- The bare basket acquire of the design notes (docs/design/holds-in-redis.md): refuse if
-- any seat key exists, else set every one with the hold's token and lifetime. Answers the
-- first taken seat's position, or 0.
for i, key in ipairs(KEYS) do
  if redis.call('EXISTS', key) == 1 then return i end
end
for _, key in ipairs(KEYS) do
  redis.call('SET', key, ARGV[1], 'PX', ARGV[2])
end
return 0
