#!/usr/bin/env bash
# The bare stores' ceilings on this machine now, one JSON line each to <out.jsonl>:
# pgbench on the bare hold statements (the upsert alone on a spread of seats and on one
# seat, and lock + count + upsert), with synchronous commit on and off; redis-benchmark on
# the bare acquire script of the design notes, over spread keys and over one key.
#
#   bench/ceilings/measure.sh <seconds per pgbench run> <out.jsonl>
#
# Needs pgbench, redis-benchmark, redis-cli and psql; Postgres on 127.0.0.1:5432 (user
# postgres, trust) and Redis on 127.0.0.1:6379. Leaves no database behind.
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=$1 ceilings=$2
pg=(-h 127.0.0.1 -U postgres)
# Let the WAL written by the previous step reach the disk before the next is measured.
settle() { psql "${pg[@]}" -qc checkpoint; sleep 3; }

psql "${pg[@]}" -qc "drop database if exists bench_ceiling" -c "create database bench_ceiling"
psql "${pg[@]}" -q -d bench_ceiling -f bench/ceilings/schema.sql
: >"$ceilings"
for script in upsert_spread upsert_hot lock_count_upsert; do
  for sync in on off; do
    settle
    tps=$(PGOPTIONS="-c synchronous_commit=$sync" pgbench "${pg[@]}" -n -M prepared -c 16 -j 2 \
      -T "$secs" -f "bench/ceilings/$script.sql" bench_ceiling 2>/dev/null |
      sed -n 's/^tps = \([0-9.]*\).*/\1/p')
    echo "{\"name\": \"pgbench $script, synchronous_commit $sync\", \"per_second\": $tps}" >>"$ceilings"
  done
done
psql "${pg[@]}" -qc "drop database bench_ceiling"
sha=$(redis-cli SCRIPT LOAD "$(cat bench/ceilings/acquire.lua)")
for spec in "spread:bench-ceiling:{s}:__rand_int__" "hot:bench-ceiling:{h}:1"; do
  name=${spec%%:*} key=${spec#*:}
  rps=$(redis-benchmark -n 300000 -c 50 -r 100000 -q EVALSHA "$sha" 1 "$key" token 2000 2>/dev/null |
    tr '\r' '\n' | grep -o '[0-9.]* requests per second' | tail -1 | cut -d' ' -f1)
  echo "{\"name\": \"redis-benchmark acquire, $name\", \"per_second\": $rps}" >>"$ceilings"
done
