#!/usr/bin/env bash
# What the operations layer costs on the hot path: the `holds` scenario (one-seat holds
# on random seats of 100,000, 64 workers) on each store, with logs as a quiet server has
# them (RUST_LOG=warn: no request span), as the default has them (info: a span with the
# request id per request, text), and as the Debian package has them (info, JSON). Every
# run also records the hold store's latency histograms. With BEFORE=<a boxoffice binary
# without them> the same runs of that binary come first, for the difference.
#   [BEFORE=path] bench/operations.sh [seconds per run, default 10]
# Needs psql, curl and jq; writes to target/bench/operations-<time>/.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
. bench/lib.sh
bench_build
out=target/bench/operations-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
measure() { # name, binary, store, RUST_LOG, format
  bin=$2 BOXOFFICE_HOLDS_PER_MINUTE=1000000 RUST_LOG=$4 BOXOFFICE_LOG_FORMAT=$5 \
    bench_serve boxoffice_operations_$$ 3995 "$out/server-$1.log" \
    --hold-store "$3" --redis-url redis://127.0.0.1:6379
  bin=target/release/boxoffice bench_run "$out/$1.json" holds --duration "${secs}s"
  jq -r --arg n "$1" '"\($n): \(.figures.holds_granted_per_second | round) holds granted/s; " + ([.operations[] | "p50 \(.latency_ms.p50) ms p99 \(.latency_ms.p99) ms"] | join("; "))' "$out/$1.json"
}
for store in postgres redis; do
  if [[ -n ${BEFORE:-} ]]; then
    measure "before-$store-info" "$BEFORE" $store info text
  fi
  measure "$store-warn" target/release/boxoffice $store warn text
  measure "$store-info" target/release/boxoffice $store info text
  measure "$store-info-json" target/release/boxoffice $store info json
done
