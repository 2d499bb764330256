#!/usr/bin/env bash
# The redis store's own acquire script (crates/boxoffice-store/scripts/hold_acquire.lua),
# bare under redis-benchmark: what Redis alone does per second, beside the service's
# `boxoffice bench holds` figures on the redis store (bench/run.sh) in the same window.
#   bench/redis_acquire.sh [redis port, default 6379]
set -euo pipefail
port=${1:-6379}
here=$(cd "$(dirname "$0")/.." && pwd)
event=b0000000-0000-4000-8000-$(date +%s%N | tail -c 13)
far=$(( ($(date +%s) + 86400) * 1000 ))
redis-cli -p "$port" HSET "sync:{$event}" v 1 s "$far" r "$far" >/dev/null
# Loaded as the store loads it: the shared prelude first.
scripts="$here/crates/boxoffice-store/scripts"
sha=$(redis-cli -p "$port" SCRIPT LOAD "$(cat "$scripts/prelude.lua"; echo; cat "$scripts/hold_acquire.lua")")
head="sync:{$event} fence:{$event} sold:{$event} held:{$event} holduser:{$event}:u__rand_int__ holdtok:{$event}:t__rand_int__ holdrate:{$event}:u__rand_int__ passend:{$event}:-"
# ARGV as the service sends it for a hold of one event: the hold rate on (a rate no user
# reaches: the limiter's cost is in), no pass, no season claim.
args=(tok user 30000 100 1 '[]' 0.00001 4294967295 '' 0 '' '')
run() { # name, key count, seat keys, seat args
  local rps
  # shellcheck disable=SC2086
  rps=$(redis-benchmark -p "$port" -n 300000 -c 50 -r 100000 -q EVALSHA "$sha" "$2" $head $3 "${args[@]}" $4 2>/dev/null \
    | tr '\r' '\n' | grep -o '[0-9.]* requests per second' | tail -1)
  echo "redis-benchmark hold_acquire.lua $1: $rps"
}
run spread 9 "hold:{$event}:s__rand_int__" "s__rand_int__ 1"
run hot 9 "hold:{$event}:s0" "s0 1"
run basket4 12 "hold:{$event}:a__rand_int__ hold:{$event}:b__rand_int__ hold:{$event}:c__rand_int__ hold:{$event}:d__rand_int__" \
  "a__rand_int__ 1 b__rand_int__ 1 c__rand_int__ 1 d__rand_int__ 1"
# Leave nothing behind.
redis-cli -p "$port" --scan --pattern "*{$event}*" | xargs -r -n 1000 redis-cli -p "$port" DEL >/dev/null
