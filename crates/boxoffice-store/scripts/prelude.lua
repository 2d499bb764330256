-- Prepended to the hold scripts that keep index keys (hold_acquire, hold_checkout,
-- hold_extend) when they are loaded, so the rule lives in one place.

-- Keeps an index key alive exactly as long as its latest entry (the key may have no
-- expiry yet, which PEXPIREAT ... GT would treat as infinite).
local function outlive(key, at)
  if redis.call('PEXPIREAT', key, at, 'GT') == 0 then
    redis.call('PEXPIREAT', key, at, 'NX')
  end
end
