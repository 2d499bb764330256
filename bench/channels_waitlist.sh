#!/usr/bin/env bash
# What sales channels and the waiting list cost: the load generator's `holds` throughput
# scenario (one-seat holds on random seats, 64 workers, 100,000 seats) without channels and
# with half the rows sold in a channel to half the buyers; and `waitlist` (1,000 one-seat
# orders cancelled at once while 1,000 buyers wait: offers made a second). On the postgres
# store and on the redis store; a release server on a database of its own for each.
#   bench/channels_waitlist.sh [seconds per holds run, default 10]
# Needs psql, curl and jq; writes to target/bench/channels-<time>/.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
. bench/lib.sh
bench_build
out=target/bench/channels-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
serve() { # store, log
  BOXOFFICE_HOLDS_PER_MINUTE=1000000 RUST_LOG=warn bench_serve boxoffice_channels_$$ 3996 "$2" \
    --hold-store "$1" --redis-url redis://127.0.0.1:6379
}
run() { # name, scenario args...
  local name=$1
  shift
  bench_run "$out/$name.json" "$@"
}
for store in postgres redis; do
  serve $store "$out/server-$store.log"
  for channels in "" --channels; do
    name=holds-$store${channels:+-channels}
    run "$name" holds --duration "${secs}s" $channels
    jq -r --arg n "$name" '"\($n): \(.figures.holds_granted_per_second | round) holds granted/s; " + ([.operations[] | "\(.requests) requests, p50 \(.latency_ms.p50) ms p99 \(.latency_ms.p99) ms"] | join("; "))' "$out/$name.json"
  done
  run waitlist-$store waitlist --orders 1000
  jq -r --arg s $store '"waitlist, \($s): \(.figures.offers_made) offers in \(.elapsed_seconds * 100 | round / 100) s = \(.figures.offers_per_second | round) offers/s; " + ([.operations[] | "cancel p50 \(.latency_ms.p50) ms p99 \(.latency_ms.p99) ms"] | join("; ")) + "; checks " + ([.checks[] | .passed] | all | tostring)' "$out/waitlist-$store.json"
done
