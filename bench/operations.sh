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
cargo build --release -q --bin boxoffice
port=3995 base=http://127.0.0.1:3995
out=target/bench/operations-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
db=boxoffice_operations_$$
pid=
stop() {
  [[ -n $pid ]] && { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
  pid=
  psql -q -h 127.0.0.1 -U postgres -c "drop database if exists $db with (force)" || true
}
trap stop EXIT
serve() { # binary, store, RUST_LOG, format, log
  stop
  BOXOFFICE_HOLDS_PER_MINUTE=1000000 RUST_LOG=$3 BOXOFFICE_LOG_FORMAT=$4 $1 serve --bind 127.0.0.1:$port \
    --database-url "postgres://postgres@127.0.0.1:5432/$db" --hold-store "$2" \
    --redis-url redis://127.0.0.1:6379 \
    --admin-token bench-admin --jwt-secret bench-secret >>"$5" 2>&1 &
  pid=$!
  for _ in $(seq 200); do curl -sf $base/healthz >/dev/null && return; sleep 0.1; done
  echo "the server did not start" >&2
  exit 1
}
measure() { # name, binary, store, RUST_LOG, format
  serve "$2" "$3" "$4" "$5" "$out/server-$1.log"
  target/release/boxoffice bench --url $base --admin-token bench-admin --jwt-secret bench-secret \
    --json holds --duration "${secs}s" >"$out/$1.json" || echo "a check of $1 failed" >&2
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
