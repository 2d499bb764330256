#!/usr/bin/env bash
# Season holds beside event holds, on one hold store: `boxoffice bench season-holds`
# (one-seat holds, each in every event of a season of <events>) and `boxoffice bench holds`
# (one-seat holds in one event), alternating <runs> times, each on a fresh database, 10 s
# at 64 workers, holds living 120 s: season holds over 10,000 seats, event holds over
# 100,000 (so that they do not run out of seats within the run).
#   bench/seasons.sh [events] [runs]      (defaults: 20 2)
# The postgres store unless store=redis (the machine's Redis, or $BOXOFFICE_REDIS_URL).
# With $bin set, that build is measured; else this tree's release build (built first).
# Needs psql, curl and jq.
set -euo pipefail
cd "$(dirname "$0")/.."
events=${1:-20} runs=${2:-2}
export BOXOFFICE_HOLD_STORE=${store:-postgres}
given=${bin:-}
. bench/lib.sh
[[ -n $given ]] || bench_build
out=target/bench/seasons-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
for run in $(seq "$runs"); do
  for scenario in season-holds holds; do
    BOXOFFICE_HOLDS_PER_MINUTE=1000000 RUST_LOG=error \
      bench_serve "boxoffice_seasons_$$" 3996 "$out/server.log"
    bench_settle
    case $scenario in
      season-holds) bench_run "$out/$scenario-$run.json" season-holds --events "$events" --seats 10000 ;;
      holds) bench_run "$out/$scenario-$run.json" holds --seats 100000 --hold-ttl 120 ;;
    esac
    jq -r --arg s "$scenario" '
      "\($s): \(.operations[0].statuses["201"] // 0) granted in \(.elapsed_seconds * 10 | round / 10) s, \((.operations[0].statuses["201"] // 0) / .elapsed_seconds | round)/s, p50 \(.operations[0].latency_ms.p50) ms, p99 \(.operations[0].latency_ms.p99) ms, checks \([.checks[] | .passed] | all)"' \
      "$out/$scenario-$run.json"
    bench_stop
  done
done
echo "reports in $out"
